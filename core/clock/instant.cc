#include "core/clock/instant.h"

#include <time.h>

#include <cstdio>
#include <exception>

#include "core/clock/monotonic.h"

namespace ncclwatch::clock {

Instant NowInstant() noexcept {
  Instant now;
  now.mono_ns = MonotonicNowNs();
  timespec wall{};
  clock_gettime(CLOCK_REALTIME, &wall);
  now.unix_ns = TimespecNs(wall);
  try {
    now.iso = FormatIso8601Utc(now.unix_ns);
  } catch (const std::exception&) {  // out of memory: the instant without its text
  }
  return now;
}

std::string FormatIso8601Utc(uint64_t unix_ns) {
  const time_t seconds = static_cast<time_t>(unix_ns / kNsPerSecond);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09lluZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<unsigned long long>(unix_ns % kNsPerSecond));
  return buf;
}

}  // namespace ncclwatch::clock
