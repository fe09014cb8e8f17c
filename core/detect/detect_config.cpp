#include "core/detect/detect_config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace ncclwatch::detect {
namespace {

std::optional<double> ParseDouble(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

void NoteError(std::string* errors, std::string_view name, const std::string& value) {
  if (errors == nullptr) return;
  if (!errors->empty()) *errors += "; ";
  *errors += std::string(name) + "=" + value + " ignored";
}

// Durations are stored as uint64_t nanoseconds: a value must convert to at least 1 ns and to at
// most 1e19 ns (uint64_t holds 1.8e19; casting a larger double is undefined behaviour).
constexpr double kMaxNs = 1e19;
constexpr double kMaxStallSec = kMaxNs / kNsPerSec;  // 317 years
constexpr double kMaxPollMs = kMaxNs / kNsPerMs;
constexpr double kMinStallSec = 1.0 / kNsPerSec;
constexpr double kMinPollMs = 1.0 / kNsPerMs;

// Applies a numeric variable if it parses and lies in [min_value, max_value].
template <typename Apply>
void ReadNumber(const EnvLookup& lookup, std::string_view name, double min_value, double max_value,
                std::string* errors, Apply apply) {
  std::optional<std::string> raw = lookup(name);
  if (!raw) return;
  std::optional<double> value = ParseDouble(*raw);
  bool in_range = value && *value >= min_value && *value <= max_value;
  if (!in_range) {
    NoteError(errors, name, *raw);
    return;
  }
  apply(*value);
}

}  // namespace

DetectConfig ConfigFromEnv(const EnvLookup& lookup, std::string* errors) {
  DetectConfig config;
  ReadNumber(lookup, "NCCLWATCH_STALL_SEC", kMinStallSec, kMaxStallSec, errors, [&](double v) {
    config.stall_threshold_ns = std::max<uint64_t>(1, static_cast<uint64_t>(v * kNsPerSec));
  });
  ReadNumber(lookup, "NCCLWATCH_POLL_MS", kMinPollMs, kMaxPollMs, errors, [&](double v) {
    config.poll_interval_ns = std::max<uint64_t>(1, static_cast<uint64_t>(v * kNsPerMs));
  });
  ReadNumber(lookup, "NCCLWATCH_LONE_RANK_FACTOR", 1, std::numeric_limits<double>::max(), errors,
             [&](double v) { config.lone_rank_factor = v; });
  if (std::optional<std::string> raw = lookup("NCCLWATCH_ADAPTIVE")) {
    if (*raw == "1") {
      config.adaptive = true;
    } else if (*raw == "0") {
      config.adaptive = false;
    } else {
      NoteError(errors, "NCCLWATCH_ADAPTIVE", *raw);
    }
  }
  return config;
}

}  // namespace ncclwatch::detect
