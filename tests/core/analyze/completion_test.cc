// `analyze` judges completion from a dump as the live detector does from shm
// (detect::EffectiveLastCompleted), and the dump keeps the record flag it needs.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/core/analyze/analyze_dumps.h"
#include "core/analyze/facts_from_dumps.h"
#include "core/dump/dump_json.h"
#include "tests/core/analyze/crafted_job.h"

using namespace ncclwatch;
using testing::AnalyzeDumps;

namespace {

// Rank 0 issued #4 while capturing (never completes) and waits in #5 with rank 1; its
// published counter still says 3. Rank 1 completed #4 and waits in #5 too.
std::vector<dump::RankDump> CapturedThenHungJob() {
  auto job = testing::HealthyJob(2, 0);
  testing::Issue(job[0], 5, 3);
  testing::Comm(job[0]).records[3].never_completes = true;
  testing::Issue(job[1], 5, 4);
  return job;
}

}  // namespace

TEST_CASE("the dump keeps never_completes and old dumps without it read as false", "[completion]") {
  auto job = CapturedThenHungJob();
  nlohmann::json doc = dump::ToJson(job[0]);
  CHECK(dump::FromJson(doc).comms[0].records[3].never_completes);
  CHECK_FALSE(dump::FromJson(doc).comms[0].records[2].never_completes);
  for (auto& r : doc["comms"][0]["records"]) r.erase("never_completes");
  CHECK_FALSE(dump::FromJson(doc).comms[0].records[3].never_completes);
}

TEST_CASE("a captured collective does not hold back completion in analyze", "[completion]") {
  auto job = CapturedThenHungJob();
  std::vector<const dump::RankDump*> dumps;
  for (const auto& d : job) dumps.push_back(&d);
  CHECK(analyze::FactsFromDumps(dumps).processes[0].comms[0].last_completed_seq == 4);
  analyze::Analysis a = AnalyzeDumps(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kCollectiveHang);
  CHECK(a.verdict.seq == 5);
  CHECK(a.verdict.ranks == std::vector<int>{0, 1});
}

TEST_CASE("without the flag the raw counter would blame the captured collective", "[completion]") {
  auto job = CapturedThenHungJob();
  testing::Comm(job[0]).records[3].never_completes = false;
  CHECK(AnalyzeDumps(job).verdict.seq == 4);
}
