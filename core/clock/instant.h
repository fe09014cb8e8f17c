// One instant on the monotonic and the wall clock: what a dump, a detection or a resolution
// note stamps. The monotonic time orders and ages events on one host; the wall time lets a
// reader line up the dumps of several hosts with their logs.
#ifndef NCCLWATCH_CORE_CLOCK_INSTANT_H_
#define NCCLWATCH_CORE_CLOCK_INSTANT_H_

#include <cstdint>
#include <string>

namespace ncclwatch::clock {

struct Instant {
  uint64_t mono_ns = 0;  // CLOCK_MONOTONIC
  uint64_t unix_ns = 0;  // CLOCK_REALTIME
  std::string iso;       // unix_ns as FormatIso8601Utc writes it; "" when out of memory
};

// Never throws.
Instant NowInstant() noexcept;

// "2026-11-21T23:12:53.123456789Z".
std::string FormatIso8601Utc(uint64_t unix_ns);

}  // namespace ncclwatch::clock

#endif  // NCCLWATCH_CORE_CLOCK_INSTANT_H_
