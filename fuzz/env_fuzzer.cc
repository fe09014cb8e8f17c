// Fuzz target: the environment of any process the preload is injected into, as core/settings
// reads it (ParseSettings): every NCCLWATCH_* variable, the launcher's job and rank variables.
//
// Input: an environment, one NAME=VALUE per line (a value may be empty). Unset or rejected
// values keep their defaults, which are always usable; each rejection is one warning line
// naming its variable.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/settings/settings.h"
#include "core/shm/layout.h"
#include "core/shm/segment_name.h"
#include "fuzz/fuzz_check.h"

namespace {

using ncclwatch::settings::EnvVars;

EnvVars ParseEnvironment(std::string_view text) {
  EnvVars env;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return env;
}

void CheckSettings(const EnvVars& env) {
  std::vector<std::string> warnings;
  const ncclwatch::settings::Settings s = ncclwatch::settings::ParseSettings(env, &warnings);
  FUZZ_CHECK(s.stall_threshold_ns > 0 && s.poll_interval_ns > 0);
  FUZZ_CHECK(s.lone_rank_factor >= 1);
  FUZZ_CHECK(!s.job_id.empty() && s.job_id.size() <= ncclwatch::shm::kMaxJobIdLength);
  FUZZ_CHECK(ncclwatch::shm::SanitizeJobId(s.job_id) == s.job_id);
  FUZZ_CHECK(ncclwatch::shm::SanitizeJobId(s.trigger_job_id) == s.trigger_job_id);
  FUZZ_CHECK(s.launcher_rank.global_rank >= -1 && s.launcher_rank.local_rank >= -1 &&
             s.launcher_rank.world_size >= -1);
  const uint32_t ring = s.ring_capacity;
  FUZZ_CHECK(ring >= ncclwatch::shm::kMinRingCapacity && ring <= ncclwatch::shm::kMaxRingCapacity);
  FUZZ_CHECK((ring & (ring - 1)) == 0);
  FUZZ_CHECK(s.stack_timeout_ms >= 1 && s.stack_max_threads >= 1);
  FUZZ_CHECK(warnings.size() <= ncclwatch::settings::Variables().size());
  for (const std::string& warning : warnings) {
    FUZZ_CHECK(warning.rfind("NCCLWATCH_", 0) == 0 && warning.find('\n') == std::string::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CheckSettings(ParseEnvironment(std::string_view(reinterpret_cast<const char*>(data), size)));
  return 0;
}
