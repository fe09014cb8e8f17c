#include "preload/lifecycle/last_gasp.h"

#include <errno.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

namespace ncclwatch::preload {
namespace {

enum State : int { kIdle = 0, kRequested = 1, kAnswered = 2 };

std::atomic<uint64_t> g_budget_ns{0};
std::atomic<uint64_t> g_floor_ns{0};
std::atomic<bool> g_armed{false};
std::atomic<int> g_state{kIdle};
std::atomic<int> g_cause{0};
std::atomic<uint64_t> g_request_ns{0};
// The watchdog's eventfd and the process that made it (a forked child makes its own).
std::atomic<int> g_wake_fd{-1};
std::atomic<pid_t> g_wake_pid{0};

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

void ArmLastGasp(uint64_t budget_ns, uint64_t floor_ns) noexcept {
  g_budget_ns.store(budget_ns, std::memory_order_relaxed);
  g_floor_ns.store(floor_ns, std::memory_order_relaxed);
  g_armed.store(budget_ns > 0, std::memory_order_release);
}

bool LastGaspWorthy(uint64_t enqueue_ns, uint64_t now_ns) noexcept {
  return g_armed.load(std::memory_order_acquire) && enqueue_ns != 0 && now_ns > enqueue_ns &&
         now_ns - enqueue_ns >= g_floor_ns.load(std::memory_order_relaxed);
}

void DisarmLastGasp() noexcept { g_armed.store(false, std::memory_order_release); }

void RunLastGasp(int cause) noexcept {
  if (!g_armed.load(std::memory_order_acquire)) return;
  int idle = kIdle;
  if (g_state.compare_exchange_strong(idle, kRequested, std::memory_order_acq_rel)) {
    g_request_ns.store(NowNs(), std::memory_order_relaxed);
    g_cause.store(cause, std::memory_order_release);
  }
  WakeWatchdog();
  const uint64_t deadline = NowNs() + g_budget_ns.load(std::memory_order_relaxed);
  // 2 ms steps: the answer is seen within 2 ms of the dump, at ~500 wakeups a second of one
  // sleeping thread while the dump runs.
  const timespec step{0, 2 * 1000 * 1000};
  while (g_state.load(std::memory_order_acquire) != kAnswered && g_armed.load(std::memory_order_acquire) &&
         NowNs() < deadline) {
    nanosleep(&step, nullptr);
  }
}

int PendingLastGasp() noexcept {
  return g_state.load(std::memory_order_acquire) == kRequested ? g_cause.load(std::memory_order_acquire) : 0;
}

uint64_t LastGaspRequestNs() noexcept { return g_request_ns.load(std::memory_order_relaxed); }

void AnswerLastGasp() noexcept { g_state.store(kAnswered, std::memory_order_release); }

int LastGaspWakeFd() noexcept {
  const pid_t self = getpid();
  if (g_wake_pid.load(std::memory_order_acquire) == self) return g_wake_fd.load(std::memory_order_acquire);
  const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  g_wake_fd.store(fd, std::memory_order_release);
  g_wake_pid.store(self, std::memory_order_release);
  return fd;
}

void WakeWatchdog() noexcept {
  const int fd = g_wake_fd.load(std::memory_order_acquire);
  if (fd < 0 || g_wake_pid.load(std::memory_order_acquire) != getpid()) return;  // the parent's, after a fork
  const int saved = errno;
  const uint64_t one = 1;
  // Nonblocking: a full counter (2^64 - 2 wakes unread) means a wake-up is pending anyway.
  [[maybe_unused]] const ssize_t n = write(fd, &one, sizeof one);
  errno = saved;
}

void DrainWatchdogWake() noexcept {
  const int fd = g_wake_fd.load(std::memory_order_acquire);
  if (fd < 0) return;
  const int saved = errno;
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = read(fd, &count, sizeof count);
  errno = saved;
}

const char* LastGaspCauseName(int cause) noexcept {
  switch (cause) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGABRT: return "SIGABRT";
    case kLastGaspCommAbort: return "ncclCommAbort";
    case kLastGaspCommRevoke: return "ncclCommRevoke";
    default: return "teardown";
  }
}

}  // namespace ncclwatch::preload
