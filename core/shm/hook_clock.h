// The time stamps the hooks put on records and blocked syncs: CLOCK_MONOTONIC_COARSE, made
// strictly increasing within the process.
//
// Why not CLOCK_MONOTONIC: on the developers' VM (AMD EPYC, kvm, clocksource tsc) a
// CLOCK_MONOTONIC read costs 38-53 ns, most of it the rdtsc (30 ns there), and every hooked op
// paid it: a third to a half of the hook's budget (100 ns per collective, 50 ns per sync;
// issue 23). The coarse clock reads the time of the kernel's last tick from the vDSO page,
// without rdtsc (about 5 ns); the increase is one uncontended compare-and-swap (about 5 ns).
//
// Why it is enough:
//  - Durations. Every rule that ages a stamp compares it with thresholds of seconds
//    (NCCLWATCH_STALL_SEC: 60 s by default, 2 s in the tests). The coarse clock is
//    CLOCK_MONOTONIC read at the last tick: it lags by less than a tick (clock_getres: 4 ms at
//    HZ=250, 1 ms at HZ=1000) and never runs ahead, so an age taken against a precise "now"
//    (the watchdog's, the tracker's completion times) is too long by less than a tick.
//  - Order. The rules also ask which of a process's ops and syncs came first (an op issued
//    before the sync that waits for it, a later op on the stream seen complete, a P2P op
//    queued behind an earlier one), often of ops microseconds apart. Stamps taken within one
//    tick would tie, so each stamp is max(coarse now, previous stamp + 1 ns): within the
//    process they are unique and in issue order. They stay within a few ns of the tick's time
//    (one ns per stamp, and each hooked call takes far longer than one ns), so never ahead of
//    CLOCK_MONOTONIC in practice. Between processes (ranks) order holds to a tick.
#ifndef NCCLWATCH_CORE_SHM_HOOK_CLOCK_H_
#define NCCLWATCH_CORE_SHM_HOOK_CLOCK_H_

#include <time.h>

#include <atomic>
#include <cstdint>

namespace ncclwatch::shm {

namespace hook_clock_detail {
inline std::atomic<uint64_t> last_stamp{0};
}  // namespace hook_clock_detail

inline uint64_t HookClockNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  const uint64_t coarse = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  std::atomic<uint64_t>& last = hook_clock_detail::last_stamp;
  uint64_t previous = last.load(std::memory_order_relaxed);
  uint64_t stamp;
  do {
    stamp = coarse > previous ? coarse : previous + 1;
  } while (!last.compare_exchange_weak(previous, stamp, std::memory_order_relaxed));
  return stamp;
}

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_HOOK_CLOCK_H_
