#include <catch2/catch.hpp>

#include <map>

#include "core/detect/detect_config.h"

namespace ncclwatch::detect {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST_CASE("an empty environment gives the documented defaults", "[config]") {
  std::string errors;
  DetectConfig config = ConfigFromEnv(FakeEnv({}), &errors);
  CHECK(config.stall_threshold_ns == 60 * kNsPerSec);
  CHECK(config.poll_interval_ns == 500 * kNsPerMs);
  CHECK(config.lone_rank_factor == 10.0);
  CHECK_FALSE(config.adaptive);
  CHECK(errors.empty());
}

TEST_CASE("environment variables override the defaults", "[config]") {
  DetectConfig config = ConfigFromEnv(FakeEnv({{"NCCLWATCH_STALL_SEC", "2.5"},
                                               {"NCCLWATCH_POLL_MS", "250"},
                                               {"NCCLWATCH_LONE_RANK_FACTOR", "4"},
                                               {"NCCLWATCH_ADAPTIVE", "1"}}));
  CHECK(config.stall_threshold_ns == 2'500'000'000ull);
  CHECK(config.poll_interval_ns == 250 * kNsPerMs);
  CHECK(config.lone_rank_factor == 4.0);
  CHECK(config.adaptive);
}

TEST_CASE("malformed or out-of-range values keep the default and are reported", "[config]") {
  std::string errors;
  DetectConfig config = ConfigFromEnv(FakeEnv({{"NCCLWATCH_STALL_SEC", "soon"},
                                               {"NCCLWATCH_POLL_MS", "0"},
                                               {"NCCLWATCH_LONE_RANK_FACTOR", "0.5"},
                                               {"NCCLWATCH_ADAPTIVE", "yes"}}),
                                      &errors);
  CHECK(config.stall_threshold_ns == 60 * kNsPerSec);
  CHECK(config.poll_interval_ns == 500 * kNsPerMs);
  CHECK(config.lone_rank_factor == 10.0);
  CHECK_FALSE(config.adaptive);
  for (const char* name : {"NCCLWATCH_STALL_SEC", "NCCLWATCH_POLL_MS",
                           "NCCLWATCH_LONE_RANK_FACTOR", "NCCLWATCH_ADAPTIVE"}) {
    CHECK(errors.find(name) != std::string::npos);
  }
}

TEST_CASE("durations that overflow or round to 0 ns keep the default and are reported", "[config]") {
  for (const char* huge : {"1e300", "1.0000001e10"}) {
    std::string errors;
    DetectConfig config = ConfigFromEnv(FakeEnv({{"NCCLWATCH_STALL_SEC", huge}, {"NCCLWATCH_POLL_MS", "1e17"}}),
                                        &errors);
    CHECK(config.stall_threshold_ns == 60 * kNsPerSec);
    CHECK(config.poll_interval_ns == 500 * kNsPerMs);
    CHECK(errors.find("NCCLWATCH_STALL_SEC") != std::string::npos);
    CHECK(errors.find("NCCLWATCH_POLL_MS") != std::string::npos);
  }
  std::string errors;
  DetectConfig config = ConfigFromEnv(FakeEnv({{"NCCLWATCH_STALL_SEC", "1e-10"}, {"NCCLWATCH_POLL_MS", "1e-7"}}),
                                      &errors);
  CHECK(config.stall_threshold_ns == 60 * kNsPerSec);
  CHECK(config.poll_interval_ns == 500 * kNsPerMs);
  CHECK(errors.find("NCCLWATCH_STALL_SEC") != std::string::npos);
  CHECK(errors.find("NCCLWATCH_POLL_MS") != std::string::npos);
  // The bounds themselves are accepted.
  config = ConfigFromEnv(FakeEnv({{"NCCLWATCH_STALL_SEC", "1e10"}, {"NCCLWATCH_POLL_MS", "1e-6"}}));
  CHECK(config.stall_threshold_ns == 10'000'000'000ull * kNsPerSec);
  CHECK(config.poll_interval_ns == 1);
}

}  // namespace
}  // namespace ncclwatch::detect
