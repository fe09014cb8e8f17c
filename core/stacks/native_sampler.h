// Interrupts threads of this process with a real-time signal and collects the
// return addresses each one records from inside the signal handler.
//
// The handler is async-signal-safe: it saves errno, finds the slot reserved
// for its thread in a table preallocated at arm time, unwinds into it, and
// posts a semaphore. Each slot carries the generation of the capture it was
// prepared for, so an answer arriving after its capture timed out is dropped
// rather than mixed into a later one.
#ifndef NCCLWATCH_CORE_STACKS_NATIVE_SAMPLER_H_
#define NCCLWATCH_CORE_STACKS_NATIVE_SAMPLER_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace ncclwatch::stacks_internal {

struct RawThreadStack {
  pid_t tid = 0;
  bool answered = false;
  // The exact pc the signal interrupted; frames up to and including it in
  // `pcs` belong to the handler and the kernel's signal trampoline.
  uintptr_t interrupted_pc = 0;
  std::vector<uintptr_t> pcs;
};

// Picks the signal, preallocates slots, loads the unwinder and installs the
// handler. Idempotent and thread-safe. It reads no environment: its settings are the
// armed CaptureOptions (armed_options.h), which core/settings fills from
// NCCLWATCH_STACK_SIGNAL and NCCLWATCH_STACK_MAX_THREADS:
//   native_signal  real-time signal number (SIGRTMIN..SIGRTMAX) to use instead of the
//                  highest free one; anything else is refused (NativeSamplerWarning) and
//                  the default is used
//   max_threads    slots preallocated (0: the default, 1024)
//
// Requests are queued with rt_tgsigqueueinfo carrying a random per-process cookie; every
// other delivery of the signal (the job's own tgkill included) goes to the disposition
// that was installed before us: handler (with or without SA_SIGINFO, under its sa_mask),
// SIG_IGN, or SIG_DFL re-raised.
Status ArmNativeSampler();

int NativeSamplerSignal();         // 0 until armed successfully.
std::string NativeSamplerWarning();  // one line when arming refused a setting, else empty
const char* NativeUnwinderName();  // "none" until armed.

// Unwinds the calling thread directly (no signal). Not for signal handlers.
std::vector<uintptr_t> UnwindCallingThread();

struct SampleOptions {
  std::chrono::milliseconds timeout{300};
  // Threads whose mask blocks the signal cannot answer; by default they are
  // not signalled (no queued signal piles up on them) nor waited for.
  bool signal_blocked_threads = false;
};

// Signals every tid (never pass the calling thread) and waits until all have
// answered or the timeout passed. Results are in the order of `tids`; a
// thread that exited meanwhile is omitted. Callers must serialize calls.
std::vector<RawThreadStack> SampleThreads(const std::vector<pid_t>& tids,
                                          const SampleOptions& options,
                                          std::vector<std::string>* errors);

}  // namespace ncclwatch::stacks_internal

#endif  // NCCLWATCH_CORE_STACKS_NATIVE_SAMPLER_H_
