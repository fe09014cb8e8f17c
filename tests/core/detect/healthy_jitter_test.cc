// Replays a simulated job poll by poll: healthy step jitter up to 3x the mean step must
// never produce a verdict, while a rank that stops must be caught by the same harness.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "core/detect/detector.h"
#include "tests/core/detect/view_builder.h"

namespace ncclwatch::detect {
namespace {

using namespace ncclwatch::detect::testing;

constexpr uint64_t kComm = 0x5EED;
constexpr int kRanks = 4;
constexpr uint64_t kSteps = 150;
constexpr uint64_t kMeanStep = 1 * kSec;

// When each rank issued each collective, and when each collective completed everywhere.
struct Timeline {
  std::vector<std::vector<uint64_t>> issued;  // [rank][seq], 0 = never
  std::vector<uint64_t> completed;            // [seq], 0 = never
  uint64_t end_ns = 0;
};

// Every rank computes for mean x U(1/3, 3) between collectives; a collective completes
// 10 ms after the last rank joins. `stop_rank` stops issuing at `stop_seq` (0: never).
Timeline Simulate(uint32_t seed, int stop_rank = -1, uint64_t stop_seq = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> factor(1.0 / 3.0, 3.0);
  Timeline t;
  t.issued.assign(kRanks, std::vector<uint64_t>(kSteps + 1, 0));
  t.completed.assign(kSteps + 1, 0);
  uint64_t previous_done = 10 * kSec;
  for (uint64_t seq = 1; seq <= kSteps; ++seq) {
    uint64_t last_join = 0;
    bool everyone = true;
    for (int rank = 0; rank < kRanks; ++rank) {
      uint64_t at = previous_done + static_cast<uint64_t>(factor(rng) * kMeanStep);
      if (rank == stop_rank && seq >= stop_seq) {
        everyone = false;
        continue;
      }
      t.issued[rank][seq] = at;
      last_join = std::max(last_join, at);
    }
    t.end_ns = std::max(t.end_ns, last_join);
    if (!everyone) break;
    t.completed[seq] = last_join + 10 * kMs;
    previous_done = t.completed[seq];
  }
  return t;
}

// What the ranks would have published at `now`.
JobFacts ViewAt(const Timeline& t, uint64_t now) {
  JobFacts view;
  for (int rank = 0; rank < kRanks; ++rank) {
    ProcessFacts process = MakeProcess(2000 + rank, rank);
    CommFacts comm = MakeComm(kComm, rank, kRanks);
    for (uint64_t seq = 1; seq <= kSteps; ++seq) {
      uint64_t at = t.issued[rank][seq];
      if (at == 0 || at > now) break;
      uint64_t done = t.completed[seq] != 0 && t.completed[seq] <= now ? t.completed[seq] : 0;
      Issue(comm, seq, at, done);
    }
    if (comm.records.size() > 64) {
      comm.records.erase(comm.records.begin(), comm.records.end() - 64);
    }
    process.comms.push_back(comm);
    view.processes.push_back(process);
  }
  return view;
}

DetectConfig TightConfig(bool adaptive) {
  DetectConfig config;
  config.stall_threshold_ns = 5 * kSec;  // above the worst healthy wait (< 3 s)
  config.adaptive = adaptive;
  config.adaptive_min_ns = 4 * kSec;
  return config;
}

// Polls every 250 ms from start to `until`; returns the first verdicts seen.
std::vector<Verdict> FirstVerdicts(const Timeline& t, const DetectConfig& config,
                                   uint64_t until) {
  for (uint64_t now = 10 * kSec; now <= until; now += 250 * kMs) {
    std::vector<Verdict> verdicts = Classify(ViewAt(t, now), config, now);
    if (!verdicts.empty()) return verdicts;
  }
  return {};
}

TEST_CASE("healthy jitter up to 3x the mean step yields no verdict", "[healthy]") {
  bool adaptive = GENERATE(false, true);
  uint32_t seed = GENERATE(1u, 2u, 3u);
  Timeline t = Simulate(seed);
  std::vector<Verdict> verdicts = FirstVerdicts(t, TightConfig(adaptive), t.end_ns + kSec);
  INFO("seed " << seed << " adaptive " << adaptive);
  CHECK(verdicts.empty());
}

TEST_CASE("the same harness catches a rank that stops", "[healthy]") {
  bool adaptive = GENERATE(false, true);
  Timeline t = Simulate(7, /*stop_rank=*/2, /*stop_seq=*/100);
  std::vector<Verdict> verdicts = FirstVerdicts(t, TightConfig(adaptive), t.end_ns + 20 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kStraggler);
  CHECK(verdicts[0].seq == 100);
  CHECK(verdicts[0].culprit_ranks == std::vector<int>{2});
}

}  // namespace
}  // namespace ncclwatch::detect
