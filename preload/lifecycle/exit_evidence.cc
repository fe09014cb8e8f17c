#include "preload/lifecycle/exit_evidence.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "core/shm/segment_writer.h"
#include "preload/hooks/hook_macros.h"
#include "preload/lifecycle/last_gasp.h"

namespace ncclwatch::preload {
namespace {

// SIGINT's default is fatal too; Python's handler turns it into KeyboardInterrupt.
constexpr int kFatalSignals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT};
// Teardown signals get a last gasp (last_gasp.h) before they take their course. They are
// taken even when the job handles them (Python's SIGINT handler, a framework's SIGTERM
// handler): the job's handler is kept and called after the last gasp, with the same
// arguments. Only an ignored one is left alone.
constexpr int kTeardownSignals[] = {SIGTERM, SIGINT, SIGABRT};

std::atomic<shm::SegmentHeader*> g_header{nullptr};
std::atomic<pid_t> g_owner{0};
// The disposition each signal had when we took it; written before our handler is installed.
struct sigaction g_previous[NSIG];

bool IsTeardown(int signal_number) {
  for (int s : kTeardownSignals) {
    if (s == signal_number) return true;
  }
  return false;
}

bool IsDefault(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_DFL;
}

bool IsIgnored(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == SIG_IGN;
}

// Async-signal-safe: atomic stores, clock_gettime, nanosleep, getpid, sigaction, raise.
void OnFatalSignal(int signal_number, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  shm::SegmentHeader* header = g_header.load(std::memory_order_acquire);
  const bool owner = header != nullptr && getpid() == ncclwatch::preload::g_owner.load(std::memory_order_relaxed);
  if (owner && IsTeardown(signal_number)) RunLastGasp(signal_number);
  const struct sigaction& previous = g_previous[signal_number];
  if (!IsDefault(previous) && !IsIgnored(previous)) {
    // The job's own handler decides what the signal does (it may well not end the process).
    errno = saved_errno;
    if ((previous.sa_flags & SA_SIGINFO) != 0) {
      previous.sa_sigaction(signal_number, info, context);
    } else {
      previous.sa_handler(signal_number);
    }
    return;
  }
  if (owner) shm::SegmentWriter::RecordExitIn(header, shm::ExitHow::kSignal, signal_number);
  // Give the signal back to its default action: it is pending (blocked while we run) and
  // is delivered as soon as we return; a fault re-executes and faults again besides.
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal_number, &default_action, nullptr);
  raise(signal_number);
  errno = saved_errno;
}

void Install() {
  for (int signal_number : kFatalSignals) {
    struct sigaction previous = {};
    if (sigaction(signal_number, nullptr, &previous) != 0) continue;
    // Other fatal signals: only where the default would kill anyway (a job that handles
    // SIGSEGV, e.g. a JIT, is never touched).
    const bool take = IsTeardown(signal_number) ? !IsIgnored(previous) : IsDefault(previous);
    if (!take) continue;
    g_previous[signal_number] = previous;
    struct sigaction action = {};
    action.sa_sigaction = OnFatalSignal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace

void ArmExitEvidence(shm::SegmentHeader* header, pid_t owner) {
  g_owner.store(owner, std::memory_order_relaxed);
  g_header.store(header, std::memory_order_release);
  static std::atomic<bool> installed{false};
  if (!installed.exchange(true)) Install();
}

}  // namespace ncclwatch::preload

// _exit(status) skips the on_exit handlers (Python's os._exit, a forked worker's end): the status
// is recorded here. Async-signal-safe, as _exit must be (jobs call it from signal handlers): atomic
// stores only, no cleanup (the job's last live process or `ncclwatch gc` removes the segment).
// Then exactly what glibc's _exit does: the exit_group system call.
NCCLWATCH_EXPORT void _exit(int status) {
    ncclwatch::shm::SegmentHeader* header = ncclwatch::preload::g_header.load(std::memory_order_acquire);
  if (header != nullptr && getpid() == ncclwatch::preload::g_owner.load(std::memory_order_relaxed)) {
    ncclwatch::shm::SegmentWriter::RecordExitIn(header, ncclwatch::shm::ExitHow::kStatus, status);
  }
  for (;;) syscall(SYS_exit_group, status);
}
