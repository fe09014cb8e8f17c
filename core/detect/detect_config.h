// Tunables of the hang detector. Plain data: core/settings fills it from NCCLWATCH_STALL_SEC,
// NCCLWATCH_POLL_MS, NCCLWATCH_LONE_RANK_FACTOR and NCCLWATCH_ADAPTIVE (DetectConfigOf), and
// tests build it directly. The detector reads no environment.
#ifndef NCCLWATCH_CORE_DETECT_DETECT_CONFIG_H_
#define NCCLWATCH_CORE_DETECT_DETECT_CONFIG_H_

#include <cstdint>

namespace ncclwatch::detect {

inline constexpr uint64_t kNsPerSec = 1'000'000'000ull;
inline constexpr uint64_t kNsPerMs = 1'000'000ull;

struct DetectConfig {
  // A collective, init or host sync that has not progressed for this long is stalled.
  uint64_t stall_threshold_ns = 60 * kNsPerSec;
  // How often the caller polls. A dead rank is blamed only after its peers have waited
  // this long twice, so a rank that exited right after finishing its last collective
  // (before its completion was published) is not blamed.
  uint64_t poll_interval_ns = 500 * kNsPerMs;
  // A rank alone on this host (its peers are remote) is declared hung only after
  // max(threshold, lone_rank_factor x its median inter-collective interval).
  double lone_rank_factor = 10.0;
  // When on, a communicator with enough history uses
  // clamp(adaptive_factor x p99 interval, adaptive_min_ns, stall_threshold_ns).
  bool adaptive = false;
  double adaptive_factor = 10.0;
  uint64_t adaptive_min_ns = 10 * kNsPerSec;
  // Intervals a communicator needs before cadence-based thresholds apply.
  int min_intervals_for_cadence = 8;
};

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_DETECT_CONFIG_H_
