// One crafted view per verdict kind: the detector must name the right kind, comm, seq, op
// and ranks, and stay silent just below the threshold.
#include <catch2/catch.hpp>

#include "core/detect/detector.h"
#include "tests/core/detect/view_builder.h"

namespace ncclwatch::detect {
namespace {

using namespace ncclwatch::detect::testing;
using Ranks = std::vector<int>;

constexpr uint64_t kComm = 0xC0FFEE;
const DetectConfig kConfig;  // 60 s threshold

bool Mentions(const Verdict& verdict, const std::string& text) {
  if (verdict.summary.find(text) != std::string::npos) return true;
  for (const std::string& note : verdict.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("straggler: the rank that has not joined #N is named once the threshold passes",
          "[verdicts]") {
  JobFacts view = HealthyJob(kComm, 4, 56);
  const uint64_t joined = 200 * kSec;
  for (int rank : {0, 1, 3}) Issue(CommOf(view, rank), 57, joined + rank * kMs);

  CHECK(Classify(view, kConfig, joined + 59 * kSec).empty());

  std::vector<Verdict> verdicts = Classify(view, kConfig, joined + 61 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kStraggler);
  CHECK(v.comm_hash == kComm);
  CHECK(v.seq == 57);
  CHECK(v.op == "AllReduce");
  CHECK(v.culprit_ranks == Ranks{2});
  CHECK(v.other_ranks == Ranks{0, 1, 3});
  CHECK(v.since_ns == joined);
  CHECK_FALSE(v.partial);
  CHECK(v.rank_evidence.size() == 4);
  CHECK(v.rank_evidence[2].last_enqueued_seq == 56);
  CHECK(v.rank_evidence[2].pid == 1002);
}

TEST_CASE("mismatch: DDP extra Broadcast on one rank is reported immediately", "[verdicts]") {
  JobFacts view = HealthyJob(kComm, 4, 56);
  const uint64_t at = 200 * kSec;
  for (int rank : {0, 2, 3}) Issue(CommOf(view, rank), 57, at);
  Issue(CommOf(view, 1), 57, at + kMs, 0, "Broadcast", 1024, 0);

  std::vector<Verdict> verdicts = Classify(view, kConfig, at + 2 * kMs);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kMismatch);
  CHECK(v.comm_hash == kComm);
  CHECK(v.seq == 57);
  CHECK(v.op == "Broadcast");  // what the culprit issued
  CHECK(v.culprit_ranks == Ranks{1});
  CHECK(v.other_ranks == Ranks{0, 2, 3});
  CHECK(v.since_ns == at);
  REQUIRE(v.rank_evidence[1].at_seq.has_value());
  CHECK(v.rank_evidence[1].at_seq->op == "Broadcast");
  CHECK(Mentions(v, "Broadcast"));
}

TEST_CASE("mismatch: with two ranks, or a tie, every rank is named", "[verdicts]") {
  SECTION("two ranks differing in count") {
    JobFacts view = HealthyJob(kComm, 2, 10);
    Issue(CommOf(view, 0), 11, 100 * kSec, 0, "AllReduce", 1024);
    Issue(CommOf(view, 1), 11, 100 * kSec, 0, "AllReduce", 2048);
    std::vector<Verdict> verdicts = Classify(view, kConfig, 100 * kSec);
    REQUIRE(verdicts.size() == 1);
    CHECK(verdicts[0].kind == VerdictKind::kMismatch);
    CHECK(verdicts[0].seq == 11);
    CHECK(verdicts[0].culprit_ranks == Ranks{0, 1});
    CHECK(verdicts[0].other_ranks.empty());
  }
  SECTION("two against two differing in root") {
    JobFacts view = HealthyJob(kComm, 4, 10);
    for (int rank : {0, 1}) Issue(CommOf(view, rank), 11, 100 * kSec, 0, "Broadcast", 8, 0);
    for (int rank : {2, 3}) Issue(CommOf(view, rank), 11, 100 * kSec, 0, "Broadcast", 8, 1);
    std::vector<Verdict> verdicts = Classify(view, kConfig, 100 * kSec);
    REQUIRE(verdicts.size() == 1);
    CHECK(verdicts[0].kind == VerdictKind::kMismatch);
    CHECK(verdicts[0].culprit_ranks == Ranks{0, 1, 2, 3});
  }
}

TEST_CASE("collective_hang: all ranks joined #N and it never completes", "[verdicts]") {
  JobFacts view = HealthyJob(kComm, 4, 56);
  const uint64_t base = 200 * kSec;
  for (int rank = 0; rank < 4; ++rank) {
    Issue(CommOf(view, rank), 57, base + rank * kSec);
    // Field report 1: every host thread is blocked in a stream sync behind the collective.
    view.processes[rank].syncs.push_back({base + rank * kSec + kMs, SyncTarget::kStream, 0x7f00});
  }
  const uint64_t last_joined = base + 3 * kSec;

  CHECK(Classify(view, kConfig, last_joined + 59 * kSec).empty());

  std::vector<Verdict> verdicts = Classify(view, kConfig, last_joined + 61 * kSec);
  REQUIRE(verdicts.size() == 1);  // the syncs are explained: no sync_stuck
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kCollectiveHang);
  CHECK(v.comm_hash == kComm);
  CHECK(v.seq == 57);
  CHECK(v.op == "AllReduce");
  CHECK(v.culprit_ranks == Ranks{0, 1, 2, 3});
  CHECK(v.since_ns == last_joined);
  REQUIRE(v.rank_evidence[0].blocked_sync.has_value());
  CHECK(v.rank_evidence[0].blocked_sync->target == SyncTarget::kStream);
  CHECK(Mentions(v, "cudaStreamSynchronize"));
}

TEST_CASE("an untracked collective is unknown, not a wait: no alarm until a tracked one waits", "[verdicts]") {
  JobFacts view = HealthyJob(kComm, 2, 56);
  const uint64_t base = 200 * kSec;
  for (int rank = 0; rank < 2; ++rank) {
    Issue(CommOf(view, rank), 57, base);
    CommOf(view, rank).records.back().untracked = true;  // no event could be recorded for #57
    CommOf(view, rank).untracked_ops = 1;
  }
  CHECK(Classify(view, kConfig, base + 600 * kSec).empty());
  // #58 is tracked and pending behind it: now the ranks wait, in #57 (oldest not known complete).
  for (int rank = 0; rank < 2; ++rank) Issue(CommOf(view, rank), 58, base + kSec);
  std::vector<Verdict> verdicts = Classify(view, kConfig, base + 600 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kCollectiveHang);
  CHECK(verdicts[0].seq == 57);
  CHECK(Mentions(verdicts[0], "1 op could not be tracked; its completion is unknown"));
}

TEST_CASE("collective_hang names only the ranks that did not complete", "[verdicts]") {
  JobFacts view = HealthyJob(kComm, 3, 5);
  Issue(CommOf(view, 0), 6, 100 * kSec, 100 * kSec + kMs, "Broadcast", 8, 0);
  Issue(CommOf(view, 1), 6, 100 * kSec, 0, "Broadcast", 8, 0);
  Issue(CommOf(view, 2), 6, 100 * kSec, 0, "Broadcast", 8, 0);
  std::vector<Verdict> verdicts = Classify(view, kConfig, 170 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kCollectiveHang);
  CHECK(verdicts[0].op == "Broadcast");
  CHECK(verdicts[0].culprit_ranks == Ranks{1, 2});
  CHECK(verdicts[0].other_ranks == Ranks{0});
}

TEST_CASE("field report 3: the parameter broadcast #1 right after init never completes",
          "[verdicts]") {
  JobFacts view = HealthyJob(kComm, 3, 0);
  for (int rank = 0; rank < 3; ++rank) {
    Issue(CommOf(view, rank), 1, 3 * kSec, 0, "Broadcast", 253'440'000, 0);
  }
  std::vector<Verdict> verdicts = Classify(view, kConfig, 603 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kCollectiveHang);
  CHECK(verdicts[0].seq == 1);
  CHECK(verdicts[0].op == "Broadcast");
  CHECK(verdicts[0].culprit_ranks == Ranks{0, 1, 2});
}

TEST_CASE("straggler is still found when leaders ran far ahead and #N left their ring",
          "[verdicts]") {
  // Field report 2 at scale: rank 1 is still restoring its data loader at #890000 while
  // rank 0 queued 100 more collectives; rank 0 keeps only its last 64 records.
  JobFacts view = HealthyJob(kComm, 2, 0);
  History(CommOf(view, 1), 889'950, 889'999, 10 * kSec, kSec);
  for (uint64_t seq = 890'000; seq < 890'100; ++seq) {
    Issue(CommOf(view, 0), seq, 100 * kSec + (seq - 890'000) * kMs);
  }
  auto& ring = CommOf(view, 0).records;
  ring.erase(ring.begin(), ring.end() - 64);
  CommOf(view, 0).last_completed_seq = 889'999;

  const uint64_t earliest_kept = 100 * kSec + 36 * kMs;  // #890036
  CHECK(Classify(view, kConfig, earliest_kept + 59 * kSec).empty());
  std::vector<Verdict> verdicts = Classify(view, kConfig, earliest_kept + 61 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kStraggler);
  CHECK(verdicts[0].seq == 890'000);
  CHECK(verdicts[0].culprit_ranks == Ranks{1});
  CHECK(verdicts[0].since_ns == earliest_kept);
}

TEST_CASE("init_hang: a communicator whose init never finishes", "[verdicts]") {
  JobFacts view;
  for (int rank = 0; rank < 2; ++rank) {
    ProcessFacts process = MakeProcess(1000 + rank, rank);
    CommFacts comm = MakeComm(kComm, rank, 2);
    comm.init_started_ns = 5 * kSec;
    comm.init_done_ns = 0;
    process.comms.push_back(comm);
    view.processes.push_back(process);
  }
  CHECK(Classify(view, kConfig, 64 * kSec).empty());

  std::vector<Verdict> verdicts = Classify(view, kConfig, 66 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kInitHang);
  CHECK(verdicts[0].comm_hash == kComm);
  CHECK(verdicts[0].op == "init");
  CHECK(verdicts[0].seq == 0);
  CHECK(verdicts[0].culprit_ranks == Ranks{0, 1});
  CHECK(verdicts[0].since_ns == 5 * kSec);
}

TEST_CASE("init_hang: every rank still in the same init is named, however late it started",
          "[verdicts]") {
  // torch ranks start init a few hundred ms apart; when the first passes the threshold the
  // others are stuck in the same collective init, and analyze names them all too.
  JobFacts view;
  const uint64_t starts[] = {5 * kSec, 5 * kSec + kSec / 4, 0};  // rank 2 finished its init
  for (int rank = 0; rank < 3; ++rank) {
    ProcessFacts process = MakeProcess(1000 + rank, rank);
    CommFacts comm = MakeComm(kComm, rank, 3);
    comm.init_started_ns = starts[rank] != 0 ? starts[rank] : 5 * kSec;
    comm.init_done_ns = starts[rank] != 0 ? 0 : 6 * kSec;
    process.comms.push_back(comm);
    view.processes.push_back(process);
  }
  CHECK(Classify(view, kConfig, 64 * kSec).empty());

  std::vector<Verdict> verdicts = Classify(view, kConfig, 65 * kSec + kSec / 8);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kInitHang);
  CHECK(verdicts[0].culprit_ranks == Ranks{0, 1});
  CHECK(verdicts[0].other_ranks == Ranks{2});
  CHECK(verdicts[0].since_ns == 5 * kSec);
}

TEST_CASE("sync_stuck: a rank blocked in a CUDA sync with no collective pending",
          "[verdicts]") {
  JobFacts view = HealthyJob(kComm, 2, 30);
  const uint64_t blocked = 100 * kSec;
  view.processes[1].syncs.push_back({0, SyncTarget::kDevice, 0});
  view.processes[1].syncs.push_back({blocked, SyncTarget::kEvent, 0xabc});

  CHECK(Classify(view, kConfig, blocked + 59 * kSec).empty());

  std::vector<Verdict> verdicts = Classify(view, kConfig, blocked + 61 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kSyncStuck);
  CHECK(v.subject_pid == 1001);
  CHECK(v.culprit_ranks == Ranks{1});
  CHECK(v.op == "event");
  CHECK(v.since_ns == blocked);
  REQUIRE(v.rank_evidence.size() == 1);
  REQUIRE(v.rank_evidence[0].blocked_sync.has_value());
  CHECK(v.rank_evidence[0].blocked_sync->handle == 0xabc);
}

TEST_CASE("sync_stuck is not reported when an earlier pending collective explains it",
          "[verdicts]") {
  JobFacts view = HealthyJob(kComm, 2, 30);
  // Rank 1 issued #31 and then blocked on the device; rank 0 is late but within threshold.
  Issue(CommOf(view, 1), 31, 100 * kSec);
  view.processes[1].syncs.push_back({100 * kSec + kMs, SyncTarget::kDevice, 1});
  // Without a lone-rank rule this is healthy: rank 0 is 30 s late (< 60 s).
  CHECK(Classify(view, kConfig, 130 * kSec).empty());
  // Past the threshold the straggler verdict wins, and the sync is its evidence.
  std::vector<Verdict> verdicts = Classify(view, kConfig, 161 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kStraggler);
  CHECK(verdicts[0].culprit_ranks == Ranks{0});
  CHECK(Mentions(verdicts[0], "cudaDeviceSynchronize"));
}

TEST_CASE("rank_exited: a dead rank while its peers wait", "[verdicts]") {
  JobFacts view = HealthyJob(kComm, 4, 56);
  view.processes[3].alive = false;
  const uint64_t waiting = 200 * kSec;
  for (int rank : {0, 1, 2}) Issue(CommOf(view, rank), 57, waiting);

  SECTION("blamed once peers have waited two polls") {
    CHECK(Classify(view, kConfig, waiting + 1 * kConfig.poll_interval_ns).empty());
    std::vector<Verdict> verdicts = Classify(view, kConfig, waiting + 3 * kConfig.poll_interval_ns);
    REQUIRE(verdicts.size() == 1);
    const Verdict& v = verdicts[0];
    CHECK(v.kind == VerdictKind::kRankExited);
    CHECK(v.comm_hash == kComm);
    CHECK(v.seq == 57);
    CHECK(v.op == "AllReduce");
    CHECK(v.culprit_ranks == Ranks{3});
    CHECK(v.other_ranks == Ranks{0, 1, 2});
    CHECK_FALSE(v.rank_evidence[3].alive);
  }
  SECTION("not blamed when it had completed the collective its peers wait on") {
    Issue(CommOf(view, 3), 57, waiting, waiting + kMs);
    CHECK(Classify(view, kConfig, waiting + 3 * kSec).empty());
  }
}

TEST_CASE("a finished job whose processes exited yields nothing", "[verdicts]") {
  JobFacts view = HealthyJob(kComm, 4, 56);
  for (ProcessFacts& process : view.processes) process.alive = false;
  CHECK(Classify(view, kConfig, 10'000 * kSec).empty());
}

}  // namespace
}  // namespace ncclwatch::detect
