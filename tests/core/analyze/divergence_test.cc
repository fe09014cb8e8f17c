// Divergence in history, offline: dumps whose completed records differ at one #N are a
// mismatch at the first divergent number, as the live detector says.
#include <catch2/catch.hpp>

#include "tests/core/analyze/analyze_dumps.h"
#include "tests/core/analyze/crafted_job.h"

using namespace ncclwatch;
using testing::AnalyzeDumps;

TEST_CASE("completed records that differ are a mismatch at the first divergent number", "[divergence]") {
  for (const char* field : {"op", "count", "datatype", "redop", "root"}) {
    auto job = testing::HealthyJob(4, 40);  // every collective completed
    for (uint64_t seq : {12u, 30u}) {
      detect::RecordFacts& r = testing::Comm(job[seq == 12 ? 2 : 1]).records[seq - 1];
      std::string f = field;
      if (f == "op") r.op = "ReduceScatter";
      if (f == "count") r.count = 2048;
      if (f == "datatype") r.datatype = 9;
      if (f == "redop") r.redop = 2;
      if (f == "root") r.root = 1;
    }
    analyze::Analysis a = AnalyzeDumps(job);
    INFO("field " << field);
    CHECK(a.verdict.kind == detect::VerdictKind::kMismatch);
    CHECK(a.verdict.seq == 12);
    CHECK(detect::AllCulpritRanks(a.verdict) == std::vector<int>{2});
  }
}

TEST_CASE("two ranks that disagree are both named, as the live detector names them", "[divergence]") {
  auto job = testing::HealthyJob(2, 5);
  testing::Comm(job[1]).records[2].datatype = 9;
  analyze::Analysis a = AnalyzeDumps(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kMismatch);
  CHECK(a.verdict.seq == 3);
  CHECK(detect::AllCulpritRanks(a.verdict) == std::vector<int>{0, 1});
  CHECK(a.verdict.other_ranks.empty());
}

TEST_CASE("a mismatch outranks an unfinished init on the same communicator, as live", "[divergence]") {
  auto job = testing::HealthyJob(3, 5);
  testing::Comm(job[2]).records[1].op = "Broadcast";
  testing::Comm(job[0]).init_done_ns = 0;
  analyze::Analysis a = AnalyzeDumps(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kMismatch);
  CHECK(a.verdict.seq == 2);
  CHECK(detect::AllCulpritRanks(a.verdict) == std::vector<int>{2});
}
