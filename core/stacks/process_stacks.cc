#include "core/stacks/process_stacks.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "core/stacks/armed_options.h"
#include "core/stacks/native_sampler.h"
#include "core/stacks/python_stacks.h"
#include "core/stacks/symbolizer.h"
#include "core/stacks/task_list.h"

namespace ncclwatch {
namespace {

using stacks_internal::RawThreadStack;

// Taken with a bound (LockCaptureWithin) so that a capture in a child forked
// mid-capture (mutex copied locked) fails instead of hanging. Not a timed_mutex:
// libstdc++ waits on one with pthread_mutex_clocklock, which TSan does not
// intercept, so TSan saw every unlock of a mutex it never saw locked.
std::mutex g_capture_mutex;

// Polls: captures are rare, and a 1 ms step is nothing next to their timeout (300 ms).
bool LockCaptureWithin(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!g_capture_mutex.try_lock()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Frames before the one whose pc is `first_foreign_pc` are ours: the signal
// handler, the unwinder and the kernel's signal trampoline before the
// interrupted pc, or on the capturing thread the capture calls before the
// return address into the caller of CaptureProcessStacks.
std::vector<Frame> Symbolize(const std::vector<uintptr_t>& pcs, uintptr_t first_foreign_pc,
                             bool first_foreign_is_exact) {
  size_t internal_until = 0;
  for (size_t i = 0; first_foreign_pc != 0 && i < pcs.size(); ++i) {
    if (pcs[i] == first_foreign_pc) {
      internal_until = i;
      break;
    }
  }
  std::vector<Frame> frames;
  for (size_t i = 0; i < pcs.size(); ++i) {
    // An interrupted pc is exact; every other pc is a return address.
    bool exact = first_foreign_is_exact && i == internal_until && pcs[i] == first_foreign_pc;
    stacks_internal::Symbol symbol = stacks_internal::SymbolizePc(pcs[i], exact);
    frames.push_back(Frame{pcs[i], symbol.function, symbol.module, symbol.offset, i < internal_until});
  }
  return frames;
}

ThreadStack DescribeThread(pid_t tid) {
  ThreadStack thread;
  thread.tid = tid;
  thread.name = stacks_internal::ReadThreadName(tid);
  thread.state = stacks_internal::ReadThreadState(tid);
  return thread;
}

ThreadStack CaptureCallingThread(pid_t self, uintptr_t return_to_caller) {
  ThreadStack thread = DescribeThread(self);
  thread.answered = true;
  thread.is_capturing_thread = true;
  thread.frames = Symbolize(stacks_internal::UnwindCallingThread(), return_to_caller, false);
  return thread;
}

// `described` was read before the signal, so its state is the one the thread
// was in, not the one our signal briefly puts it in.
ThreadStack FromRaw(ThreadStack described, const RawThreadStack& raw) {
  described.answered = raw.answered;
  described.frames = Symbolize(raw.pcs, raw.interrupted_pc, true);
  return described;
}

void AddPythonStacks(ProcessStacks* stacks) {
  stacks_internal::PythonCapture python = stacks_internal::CapturePythonStacks();
  stacks->is_python = python.is_python;
  stacks->python = std::move(python.threads);
  stacks->python_error = std::move(python.error);
  stacks->python_method = std::move(python.method);
}

}  // namespace

Status ArmStackCapture(const CaptureOptions& options) {
  stacks_internal::FixArmedOptions(options);
  Status armed = stacks_internal::ArmNativeSampler();
  stacks_internal::LoadSymbolizer();
  stacks_internal::ArmPythonStacks();
  return armed;
}

__attribute__((noinline)) ProcessStacks CaptureProcessStacks(const CaptureOptions& options) {
  uintptr_t return_to_caller = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  ProcessStacks stacks;
  stacks.pid = getpid();
  if (!LockCaptureWithin(options.timeout)) {
    stacks.errors.push_back("another capture is still running");
    return stacks;
  }
  std::lock_guard<std::mutex> lock(g_capture_mutex, std::adopt_lock);
  const Status armed = ArmStackCapture(options);
  if (!armed.ok()) stacks.errors.push_back("native capture unavailable: " + armed.message());
  stacks.symbolizer = stacks_internal::LoadSymbolizer();
  const Status helper = stacks_internal::SymbolizerHelperStatus();
  if (!helper.ok()) stacks.errors.push_back("symbolizer: " + helper.message());
  stacks.unwinder = stacks_internal::NativeUnwinderName();
  stacks.signal_number = stacks_internal::NativeSamplerSignal();

  pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  std::vector<pid_t> others;
  std::map<pid_t, ThreadStack> described;
  for (pid_t tid : stacks_internal::ListThreadIds()) {
    if (tid == self) continue;
    others.push_back(tid);
    described[tid] = DescribeThread(tid);
  }
  stacks_internal::SampleOptions sample_options;
  sample_options.timeout = options.timeout;
  std::vector<RawThreadStack> raw = stacks_internal::SampleThreads(others, sample_options, &stacks.errors);
  // Python is dumped right after the native sample so both describe the same moment.
  if (options.capture_python) AddPythonStacks(&stacks);

  stacks.threads.push_back(CaptureCallingThread(self, return_to_caller));
  for (const RawThreadStack& thread : raw) stacks.threads.push_back(FromRaw(described[thread.tid], thread));
  return stacks;
}

}  // namespace ncclwatch
