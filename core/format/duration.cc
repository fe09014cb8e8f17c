#include "core/format/duration.h"

#include <cinttypes>
#include <cstdio>

namespace ncclwatch::format {

std::string FormatDuration(uint64_t ns) {
  constexpr uint64_t kNsPerTenth = 100'000'000;
  const uint64_t seconds = ns / 1'000'000'000;
  char buf[32];
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 ".%" PRIu64 "s", seconds, ns / kNsPerTenth % 10);
  } else if (seconds < 3600) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 "m%02" PRIu64 "s", seconds / 60, seconds % 60);
  } else if (seconds < 86400) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 "h%02" PRIu64 "m", seconds / 3600, seconds % 3600 / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%" PRIu64 "d%02" PRIu64 "h", seconds / 86400, seconds % 86400 / 3600);
  }
  return buf;
}

std::string FormatAge(uint64_t now_ns, uint64_t since_ns) {
  return FormatDuration(now_ns > since_ns ? now_ns - since_ns : 0);
}

}  // namespace ncclwatch::format
