#include "core/stacks/python_faulthandler.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>

#include "core/stacks/armed_options.h"

namespace ncclwatch::stacks_internal {
namespace {

using AddPendingCall = int (*)(int (*)(void*), void*);
using RunSimpleString = int (*)(const char*);

std::mutex g_mutex;
bool g_arm_attempted = false;
Status g_armed;  // what the one attempt to arm gave
int g_signal = 0;
int g_dump_fd = -1;
RunSimpleString g_run_simple_string = nullptr;
std::atomic<bool> g_registered{false};
std::atomic<bool> g_registration_failed{false};

bool HandlerIsDefault(int signal_number) {
  struct sigaction current;
  return sigaction(signal_number, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
         current.sa_handler == SIG_DFL;
}

int ChooseSignal() {
  // Real-time signals only, as for the native sampler: faulthandler.register on SIGTERM or
  // SIGINT would change how the job stops. Others fall back to the default.
  const int chosen = ArmedOptions().python_signal;
  if (chosen >= SIGRTMIN && chosen <= SIGRTMAX) return chosen;
  for (int candidate = SIGRTMAX; candidate >= SIGRTMIN; --candidate) {
    if (HandlerIsDefault(candidate)) return candidate;
  }
  return 0;
}

// Runs on the main thread, holding the GIL, from the interpreter's pending calls.
int RegisterFaulthandler(void*) {
  std::string code = "import faulthandler\nfaulthandler.register(" + std::to_string(g_signal) +
                     ", file=" + std::to_string(g_dump_fd) + ", all_threads=True, chain=False)\n";
  bool ok = g_run_simple_string(code.c_str()) == 0;
  (ok ? g_registered : g_registration_failed).store(true, std::memory_order_release);
  return 0;  // A failure is reported at dump time, not raised into the host's code.
}

Status Arm() {
  auto add_pending_call = reinterpret_cast<AddPendingCall>(dlsym(RTLD_DEFAULT, "Py_AddPendingCall"));
  g_run_simple_string = reinterpret_cast<RunSimpleString>(dlsym(RTLD_DEFAULT, "PyRun_SimpleString"));
  if (add_pending_call == nullptr || g_run_simple_string == nullptr) {
    return Status::Error("interpreter exports neither _Py_DumpTracebackThreads nor Py_AddPendingCall/PyRun_SimpleString");
  }
  g_signal = ChooseSignal();
  if (g_signal == 0) return Status::Error("no free real-time signal for faulthandler");
  g_dump_fd = memfd_create("ncclwatch-faulthandler", MFD_CLOEXEC);
  if (g_dump_fd < 0) return Status::Error("memfd_create failed", errno);
  if (add_pending_call(&RegisterFaulthandler, nullptr) != 0) {
    return Status::Error("Py_AddPendingCall refused the registration");
  }
  return OkStatus();
}

bool SignalBlockedHere(int signal_number) {
  sigset_t current;
  return pthread_sigmask(SIG_BLOCK, nullptr, &current) == 0 && sigismember(&current, signal_number) == 1;
}

std::string ReadAll(int fd) {
  std::string text;
  if (lseek(fd, 0, SEEK_SET) != 0) return text;
  char buffer[8192];
  for (ssize_t got; (got = read(fd, buffer, sizeof(buffer))) > 0;) text.append(buffer, static_cast<size_t>(got));
  return text;
}

}  // namespace

Status ArmFaulthandlerFallback() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_arm_attempted) {
    g_arm_attempted = true;
    g_armed = Arm();
    if (!g_armed.ok()) g_signal = 0;
  }
  return g_armed;
}

Result<std::string> DumpThroughFaulthandler() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_signal == 0) return g_arm_attempted ? g_armed : Status::Error("faulthandler fallback not armed");
  if (g_registration_failed.load(std::memory_order_acquire)) {
    return Status::Error("faulthandler.register failed in the interpreter");
  }
  // Sending the signal before faulthandler owns it would kill the process.
  if (!g_registered.load(std::memory_order_acquire) || HandlerIsDefault(g_signal)) {
    return Status::Error("faulthandler not registered yet (the main thread has not run Python code since arming)");
  }
  if (SignalBlockedHere(g_signal)) {
    return Status::Error("signal " + std::to_string(g_signal) + " is blocked on the capturing thread");
  }
  if (ftruncate(g_dump_fd, 0) != 0 || lseek(g_dump_fd, 0, SEEK_SET) != 0) {
    return Status::Error("cannot reset the faulthandler memfd", errno);
  }
  // A signal sent to the calling thread is handled before tgkill returns.
  syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), g_signal);
  return ReadAll(g_dump_fd);
}

}  // namespace ncclwatch::stacks_internal
