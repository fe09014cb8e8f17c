// Divergence in history: records that differ at one #N are a mismatch even when every one
// of them completed (NCCL can finish mismatched calls on corrupt data and hang later).
#include <catch2/catch.hpp>

#include "core/detect/detector.h"
#include "tests/core/detect/view_builder.h"

namespace ncclwatch::detect {
namespace {

using namespace ncclwatch::detect::testing;

constexpr uint64_t kComm = 0xD1CE;
const DetectConfig kConfig;  // 60 s threshold

// Rewrites what `rank` issued at #seq (its completion stays as it was).
RecordFacts& RecordOf(JobFacts& view, int rank, uint64_t seq) {
  for (RecordFacts& r : CommOf(view, rank).records) {
    if (r.seq == seq) return r;
  }
  FAIL("no record #" << seq);
  throw;
}

TEST_CASE("completed records that differ in any field are a mismatch at the first divergent #", "[divergence]") {
  for (const char* field : {"op", "count", "datatype", "redop", "root"}) {
    JobFacts view = HealthyJob(kComm, 4, 40);  // every collective completed
    RecordFacts& first = RecordOf(view, 2, 12);
    RecordFacts& later = RecordOf(view, 1, 30);
    for (RecordFacts* r : {&first, &later}) {
      std::string f = field;
      if (f == "op") r->op = "ReduceScatter";
      if (f == "count") r->count = 2048;
      if (f == "datatype") r->datatype = 9;
      if (f == "redop") r->redop = 2;
      if (f == "root") r->root = 1;
    }
    std::vector<Verdict> verdicts = Classify(view, kConfig, HealthyIssueTime(40) + kSec);
    INFO("field " << field);
    REQUIRE(verdicts.size() == 1);
    CHECK(verdicts[0].kind == VerdictKind::kMismatch);
    CHECK(verdicts[0].seq == 12);
    CHECK(verdicts[0].culprit_ranks == std::vector<int>{2});
  }
}

TEST_CASE("a divergence at the oldest record still kept in the ring is found", "[divergence]") {
  JobFacts view = HealthyJob(kComm, 3, 100);  // rings keep #37..#100
  RecordOf(view, 0, 37).count = 1;
  std::vector<Verdict> verdicts = Classify(view, kConfig, HealthyIssueTime(100) + kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kMismatch);
  CHECK(verdicts[0].seq == 37);
  CHECK(verdicts[0].culprit_ranks == std::vector<int>{0});
}

TEST_CASE("identical completed histories are healthy", "[divergence]") {
  CHECK(Classify(HealthyJob(kComm, 4, 100), kConfig, HealthyIssueTime(100) + kSec).empty());
}

}  // namespace
}  // namespace ncclwatch::detect
