// Tunables of the hang detector. Plain data; ConfigFromEnv maps environment variables onto
// it without touching the process environment itself (the caller passes a lookup).
#ifndef NCCLWATCH_CORE_DETECT_DETECT_CONFIG_H_
#define NCCLWATCH_CORE_DETECT_DETECT_CONFIG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

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

// Returns the value of an environment variable, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Reads NCCLWATCH_STALL_SEC (seconds, may be fractional, 1e-9 .. 1e10), NCCLWATCH_POLL_MS
// (1e-6 .. 1e13: both at least 1 ns and at most 1e19 ns, what uint64_t nanoseconds hold),
// NCCLWATCH_LONE_RANK_FACTOR (>= 1), NCCLWATCH_ADAPTIVE ("1"/"0"). Unset or malformed
// values keep their defaults; malformed ones are named in *errors when it is non-null.
DetectConfig ConfigFromEnv(const EnvLookup& lookup, std::string* errors = nullptr);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_DETECT_CONFIG_H_
