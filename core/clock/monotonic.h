// CLOCK_MONOTONIC in nanoseconds: the one unit of time every stage of ncclwatch compares
// (records, syncs, facts, dumps, ages). Comparable between the processes of one boot of one
// host, never between hosts.
#ifndef NCCLWATCH_CORE_CLOCK_MONOTONIC_H_
#define NCCLWATCH_CORE_CLOCK_MONOTONIC_H_

#include <time.h>

#include <cstdint>

namespace ncclwatch::clock {

inline constexpr uint64_t kNsPerSecond = 1000000000ull;

inline uint64_t TimespecNs(const timespec& ts) {
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSecond + static_cast<uint64_t>(ts.tv_nsec);
}

// CLOCK_MONOTONIC now (vDSO, no system call; 20-50 ns on a VM). The hooks stamp with the
// cheaper StampNowNs (stamp_clock.h), which reads the same clock.
inline uint64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimespecNs(ts);
}

}  // namespace ncclwatch::clock

#endif  // NCCLWATCH_CORE_CLOCK_MONOTONIC_H_
