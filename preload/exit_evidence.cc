#include "preload/exit_evidence.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "core/shm/segment_writer.h"
#include "preload/hook_macros.h"

namespace ncclwatch::preload {
namespace {

constexpr int kFatalSignals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM};

std::atomic<shm::SegmentHeader*> g_header{nullptr};
std::atomic<pid_t> g_owner{0};

// Async-signal-safe: atomic stores, clock_gettime, getpid, sigaction, raise.
void OnFatalSignal(int signal_number, siginfo_t*, void*) {
  const int saved_errno = errno;
  shm::SegmentHeader* header = g_header.load(std::memory_order_acquire);
  if (header != nullptr && getpid() == ncclwatch::preload::g_owner.load(std::memory_order_relaxed)) {
    shm::SegmentWriter::RecordExitIn(header, shm::ExitHow::kSignal, signal_number);
  }
  // Give the signal back to its default action: it is pending (blocked while we run) and
  // is delivered as soon as we return; a fault re-executes and faults again besides.
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal_number, &default_action, nullptr);
  raise(signal_number);
  errno = saved_errno;
}

void InstallWhereDefault() {
  for (int signal_number : kFatalSignals) {
    struct sigaction previous = {};
    if (sigaction(signal_number, nullptr, &previous) != 0) continue;
    const bool is_default = (previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler == SIG_DFL;
    if (!is_default) continue;  // the job's own handler (or SIG_IGN): never ours to touch
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
  if (!installed.exchange(true)) InstallWhereDefault();
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
