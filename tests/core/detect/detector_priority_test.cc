// When several conditions hold on one communicator, the most important is the one reported.
#include <catch2/catch.hpp>

#include "core/detect/detector.h"
#include "tests/core/detect/view_builder.h"

namespace ncclwatch::detect {
namespace {

using namespace ncclwatch::detect::testing;
using Ranks = std::vector<int>;

constexpr uint64_t kComm = 0xABCD;
const DetectConfig kConfig;

TEST_CASE("mismatch beats straggler", "[priority]") {
  JobFacts view = HealthyJob(kComm, 3, 10);
  Issue(CommOf(view, 0), 11, 100 * kSec);
  Issue(CommOf(view, 1), 11, 100 * kSec, 0, "AllGather");
  // Rank 2 never joins #11: a straggler too, long past the threshold.
  std::vector<Verdict> verdicts = Classify(view, kConfig, 500 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kMismatch);
  CHECK(verdicts[0].culprit_ranks == Ranks{0, 1});
}

TEST_CASE("rank_exited beats straggler when the missing rank is dead", "[priority]") {
  JobFacts view = HealthyJob(kComm, 3, 10);
  Issue(CommOf(view, 0), 11, 100 * kSec);
  Issue(CommOf(view, 1), 11, 100 * kSec);
  view.processes[2].alive = false;
  std::vector<Verdict> verdicts = Classify(view, kConfig, 500 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kRankExited);
  CHECK(verdicts[0].culprit_ranks == Ranks{2});
}

TEST_CASE("init_hang beats straggler", "[priority]") {
  JobFacts view = HealthyJob(kComm, 3, 0);
  CommOf(view, 2).init_done_ns = 0;
  Issue(CommOf(view, 0), 1, 3 * kSec);
  Issue(CommOf(view, 1), 1, 3 * kSec);
  std::vector<Verdict> verdicts = Classify(view, kConfig, 500 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kInitHang);
  CHECK(verdicts[0].culprit_ranks == Ranks{2});
  CHECK(verdicts[0].other_ranks == Ranks{0, 1});
}

TEST_CASE("straggler, not collective_hang, while waiting ranks sit in the unjoined #N",
          "[priority]") {
  JobFacts view = HealthyJob(kComm, 2, 10);
  Issue(CommOf(view, 0), 11, 100 * kSec);
  std::vector<Verdict> verdicts = Classify(view, kConfig, 500 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kStraggler);
}

TEST_CASE("an earlier hung collective explains later laggers", "[priority]") {
  JobFacts view = HealthyJob(kComm, 2, 10);
  // Both joined #11, which never completes; rank 0 went on to issue #12.
  Issue(CommOf(view, 0), 11, 100 * kSec);
  Issue(CommOf(view, 1), 11, 100 * kSec);
  Issue(CommOf(view, 0), 12, 100 * kSec + kMs);
  std::vector<Verdict> verdicts = Classify(view, kConfig, 500 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kCollectiveHang);
  CHECK(verdicts[0].seq == 11);
}

TEST_CASE("a comm verdict absorbs sync_stuck of its ranks; others still get theirs",
          "[priority]") {
  JobFacts view = HealthyJob(kComm, 3, 10);
  Issue(CommOf(view, 0), 11, 100 * kSec);
  Issue(CommOf(view, 1), 11, 100 * kSec);
  // The straggler (rank 2) is blocked in a device sync of its own making.
  view.processes[2].syncs.push_back({90 * kSec, SyncTarget::kDevice, 2});
  // An unrelated process (no communicator) is blocked too.
  ProcessFacts loner = MakeProcess(555, 9);
  loner.syncs.push_back({50 * kSec, SyncTarget::kStream, 0x1});
  view.processes.push_back(loner);

  std::vector<Verdict> verdicts = Classify(view, kConfig, 200 * kSec);
  REQUIRE(verdicts.size() == 2);
  CHECK(verdicts[0].kind == VerdictKind::kStraggler);
  CHECK(verdicts[0].culprit_ranks == Ranks{2});
  REQUIRE(verdicts[0].rank_evidence[2].blocked_sync.has_value());
  CHECK(verdicts[1].kind == VerdictKind::kSyncStuck);
  CHECK(verdicts[1].subject_pid == 555);
}

TEST_CASE("verdicts of several communicators come in priority order", "[priority]") {
  JobFacts view = HealthyJob(0x1, 2, 10);  // will hang
  Issue(CommOf(view, 0), 11, 100 * kSec);
  Issue(CommOf(view, 1), 11, 100 * kSec);
  for (int rank = 0; rank < 2; ++rank) {   // a second comm with a mismatch
    CommFacts other = MakeComm(0x2, rank, 2);
    Issue(other, 1, 150 * kSec, 0, rank == 0 ? "AllReduce" : "Broadcast");
    view.processes[rank].comms.push_back(other);
  }
  std::vector<Verdict> verdicts = Classify(view, kConfig, 200 * kSec);
  REQUIRE(verdicts.size() == 2);
  CHECK(verdicts[0].kind == VerdictKind::kMismatch);
  CHECK(verdicts[0].comm_hash == 0x2);
  CHECK(verdicts[1].kind == VerdictKind::kCollectiveHang);
  CHECK(verdicts[1].comm_hash == 0x1);
}

}  // namespace
}  // namespace ncclwatch::detect
