// Snapshot of every thread's native and Python stack in the running process.
//
// Contract:
//  - CaptureProcessStacks may be called from any thread except inside a signal
//    handler. It returns within roughly options.timeout plus symbolization time
//    and never waits forever: threads that cannot answer (signal blocked, stuck
//    in uninterruptible sleep, stopped) are reported with answered == false.
//  - Other threads are interrupted with one real-time signal each (see
//    README.md). Interrupted blocking calls such as poll(2) or nanosleep(2) may
//    return EINTR in the host, as with any signal-based profiler.
//  - Nothing is installed at load time. ArmStackCapture() (or the first
//    capture) installs the signal handler and loads the unwinder and symbolizer,
//    with the arming options it was given (see CaptureOptions).
//  - Frames are ordered innermost first, both native and Python.
//  - Thread-safe: concurrent captures are serialized.
#ifndef NCCLWATCH_CORE_STACKS_PROCESS_STACKS_H_
#define NCCLWATCH_CORE_STACKS_PROCESS_STACKS_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace ncclwatch {

struct Frame {
  uintptr_t pc = 0;       // Raw program counter / return address.
  std::string function;   // Demangled name, or empty when unknown.
  std::string module;     // Path of the object containing pc, or empty.
  uintptr_t offset = 0;   // pc minus the load base of module.
  // True for the capture machinery itself (signal handler, unwinder, signal
  // trampoline, the capture call on the capturing thread): reports hide these.
  bool internal = false;
};

struct ThreadStack {
  pid_t tid = 0;
  std::string name;       // /proc/self/task/<tid>/comm
  char state = '?';       // Third field of /proc/self/task/<tid>/stat.
  bool answered = false;  // False: the thread did not answer within the timeout.
  bool is_capturing_thread = false;
  std::vector<Frame> frames;
};

struct PythonFrame {
  std::string file;
  int line = 0;
  std::string function;
};

struct PythonThread {
  uint64_t thread_id = 0;  // Python's thread identifier (pthread_t), as printed.
  bool current = false;    // Interpreter marked it as the current thread.
  std::vector<PythonFrame> frames;
};

// Filled from the NCCLWATCH_STACK_* / NCCLWATCH_PYTHON_STACK* / NCCLWATCH_SYMBOLIZER
// settings by core/settings (CaptureOptionsOf); this library reads no environment.
struct CaptureOptions {
  // Total budget for all threads to answer the signal.
  std::chrono::milliseconds timeout{300};
  bool capture_python = true;
  // Fixed by the first ArmStackCapture or capture of the process; later values are ignored.
  int native_signal = 0;            // a real-time signal; 0: the highest free one
  int python_signal = 0;            // of the faulthandler fallback; 0: the highest free one
  size_t max_threads = 1024;        // threads sampled per capture (preallocated slots)
  bool backtrace_unwinder = false;  // glibc backtrace() instead of libunwind
  std::string symbolizer;           // libncclwatch_symbolizer.so path, "none", or "": search
  bool faulthandler_python = false; // the faulthandler fallback even when a direct dump exists
};

struct ProcessStacks {
  pid_t pid = 0;
  std::vector<ThreadStack> threads;
  bool is_python = false;
  std::vector<PythonThread> python;
  std::string python_error;   // Empty on success or when not a Python process.
  // How Python stacks were taken: "dump_traceback_threads" (direct call,
  // preferred) or "faulthandler" (fallback); empty when not a Python process.
  std::string python_method;
  std::string unwinder;       // "libunwind", "backtrace" or "none".
  std::string symbolizer;     // "absl" or "dladdr".
  int signal_number = 0;      // Signal used, 0 if native capture unavailable.
  std::vector<std::string> errors;  // Degradations worth reporting.
};

// Installs the handler and loads helpers now rather than at the first capture,
// so that a later capture in a hung process needs no dlopen, and in Python
// processes that need it schedules the faulthandler fallback (which only
// registers once the main thread runs Python code again). Idempotent.
// An error (with the reason) when native capture of other threads is
// impossible; capture then still reports the calling thread and Python stacks.
Status ArmStackCapture(const CaptureOptions& options);

ProcessStacks CaptureProcessStacks(const CaptureOptions& options);

}  // namespace ncclwatch

#endif  // NCCLWATCH_CORE_STACKS_PROCESS_STACKS_H_
