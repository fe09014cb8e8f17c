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
  CHECK(dump::ParseDump(doc.dump()).value().comms[0].records[3].never_completes);
  CHECK_FALSE(dump::ParseDump(doc.dump()).value().comms[0].records[2].never_completes);
  for (auto& r : doc["comms"][0]["records"]) r.erase("never_completes");
  CHECK_FALSE(dump::ParseDump(doc.dump()).value().comms[0].records[3].never_completes);
}

TEST_CASE("a captured collective does not hold back completion in analyze", "[completion]") {
  auto job = CapturedThenHungJob();
  std::vector<const dump::RankDump*> dumps;
  for (const auto& d : job) dumps.push_back(&d);
  CHECK(analyze::FactsFromDumps(dumps).processes[0].comms[0].last_completed_seq == 4);
  analyze::Analysis a = AnalyzeDumps(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kCollectiveHang);
  CHECK(a.verdict.seq == 5);
  CHECK(detect::AllCulpritRanks(a.verdict) == std::vector<int>{0, 1});
}

TEST_CASE("without the flag the raw counter would blame the captured collective", "[completion]") {
  auto job = CapturedThenHungJob();
  testing::Comm(job[0]).records[3].never_completes = false;
  CHECK(AnalyzeDumps(job).verdict.seq == 4);
}

TEST_CASE("the facts hold a dump's collectives in ascending order, the first record of each number", "[completion]") {
  auto job = testing::HealthyJob(2, 0);
  testing::Issue(job[0], 4, 2);
  std::vector<detect::RecordFacts>& records = testing::Comm(job[0]).records;
  std::swap(records[0], records[3]);  // #4 #2 #3 #1: a hostile writer's order
  detect::RecordFacts again = records[2];  // #3 once more, as a Broadcast: the first one counts
  again.op = "Broadcast";
  records.push_back(again);
  records[1].peer = 5;  // a collective has no peer, whatever the file says
  const std::vector<const dump::RankDump*> dumps = {&job[0], &job[1]};
  const detect::JobFacts facts = analyze::FactsFromDumps(dumps);
  const std::vector<detect::RecordFacts>& read = facts.processes[0].comms[0].records;
  REQUIRE(read.size() == 4);
  for (size_t i = 0; i < read.size(); ++i) {
    CHECK(read[i].seq == i + 1);
    CHECK(read[i].peer == -1);
  }
  CHECK(read[2].op == "AllReduce");
  CHECK(facts.processes[0].comms[0].last_completed_seq == 2);
  // In the writer's order, as the watchdog writes them, they are taken as they are.
  CHECK(analyze::FactsFromDumps(dumps).processes[1].comms[0].records.size() ==
        testing::Comm(job[1]).records.size());
}
