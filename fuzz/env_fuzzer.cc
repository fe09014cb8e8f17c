// Fuzz target: the NCCLWATCH_* settings and the launcher variables the preload reads from the
// environment of any process it is injected into: the detector's tunables
// (core/detect/detect_config.h), the job id and rank (core/shm/job_identity.h), and the ring
// capacity (NCCLWATCH_RING, parsed in preload/runtime.cc with strtoull and normalized by
// core/shm/layout.h, mirrored here).
//
// Input: an environment, one NAME=VALUE per line (a value may be empty). Unset or malformed
// values keep their defaults, which are always usable.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/detect/detect_config.h"
#include "core/shm/job_identity.h"
#include "core/shm/layout.h"
#include "core/shm/segment_name.h"
#include "fuzz/fuzz_check.h"

namespace {

std::map<std::string, std::string, std::less<>> ParseEnvironment(std::string_view text) {
  std::map<std::string, std::string, std::less<>> env;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return env;
}

void CheckDetectConfig(const std::map<std::string, std::string, std::less<>>& env) {
  std::string errors;
  const ncclwatch::detect::DetectConfig config = ncclwatch::detect::ConfigFromEnv(
      [&](std::string_view name) -> std::optional<std::string> {
        const auto it = env.find(name);
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      &errors);
  FUZZ_CHECK(config.stall_threshold_ns > 0 && config.poll_interval_ns > 0);
  FUZZ_CHECK(config.lone_rank_factor >= 1);
}

void CheckIdentity(const std::map<std::string, std::string, std::less<>>& env) {
  const ncclwatch::shm::EnvLookup lookup = [&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  const std::string job = ncclwatch::shm::JobIdFromEnvironment(lookup);
  FUZZ_CHECK(!job.empty() && job.size() <= ncclwatch::shm::kMaxJobIdLength);
  FUZZ_CHECK(ncclwatch::shm::SanitizeJobId(job) == job);
  const ncclwatch::shm::RankIdentity rank = ncclwatch::shm::RankFromEnvironment(lookup);
  FUZZ_CHECK(rank.global_rank >= -1 && rank.local_rank >= -1 && rank.world_size >= -1);
}

void CheckRingCapacity(const std::map<std::string, std::string, std::less<>>& env) {
  const auto it = env.find("NCCLWATCH_RING");
  if (it == env.end()) return;
  const uint64_t requested = std::strtoull(it->second.c_str(), nullptr, 10);
  const uint32_t capacity = ncclwatch::shm::NormalizeRingCapacity(requested);
  FUZZ_CHECK(capacity >= ncclwatch::shm::kMinRingCapacity && capacity <= ncclwatch::shm::kMaxRingCapacity);
  FUZZ_CHECK((capacity & (capacity - 1)) == 0);
  FUZZ_CHECK(ncclwatch::shm::ComputeGeometry(capacity).ring_capacity == capacity);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto env = ParseEnvironment(std::string_view(reinterpret_cast<const char*>(data), size));
  CheckDetectConfig(env);
  CheckIdentity(env);
  CheckRingCapacity(env);
  return 0;
}
