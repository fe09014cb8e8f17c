#include "core/detect/detect_config.h"

#include <charconv>
#include <cmath>

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

// Applies a numeric variable if it parses and is at least `min_value`.
template <typename Apply>
void ReadNumber(const EnvLookup& lookup, std::string_view name, double min_value,
                bool exclusive_min, std::string* errors, Apply apply) {
  std::optional<std::string> raw = lookup(name);
  if (!raw) return;
  std::optional<double> value = ParseDouble(*raw);
  bool in_range = value && (exclusive_min ? *value > min_value : *value >= min_value);
  if (!in_range) {
    NoteError(errors, name, *raw);
    return;
  }
  apply(*value);
}

}  // namespace

DetectConfig ConfigFromEnv(const EnvLookup& lookup, std::string* errors) {
  DetectConfig config;
  ReadNumber(lookup, "NCCLWATCH_STALL_SEC", 0, true, errors, [&](double v) {
    config.stall_threshold_ns = static_cast<uint64_t>(v * kNsPerSec);
  });
  ReadNumber(lookup, "NCCLWATCH_POLL_MS", 0, true, errors, [&](double v) {
    config.poll_interval_ns = static_cast<uint64_t>(v * kNsPerMs);
  });
  ReadNumber(lookup, "NCCLWATCH_LONE_RANK_FACTOR", 1, false, errors,
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
