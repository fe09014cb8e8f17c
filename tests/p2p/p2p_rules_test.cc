// The P2P rules (core/detect/p2p_rules.cc) on crafted shared-memory snapshots, judged by both
// producers of the job model: live (watch::FactsFromSnapshot, Scope::kHost, a clock past every
// threshold) and offline (each process written as a dump through the watchdog's own
// AddPublishedState, round-tripped through the JSON schema, then `analyze`). Every case must
// give the same kind, communicator, number, op, culprits, waiters and P2P evidence both ways.
#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/analyze/report.h"
#include "core/detect/completion.h"
#include "core/detect/detector.h"
#include "core/detect/p2p_op.h"
#include "core/dump/dump_json.h"
#include "core/shm/layout.h"
#include "core/shm/record_flags.h"
#include "core/watch/dump_builder.h"
#include "core/watch/facts_from_snapshot.h"
#include "tests/core/analyze/analyze_dumps.h"

namespace ncclwatch {
namespace {

using Ranks = std::vector<int>;
constexpr uint64_t kSec = 1'000'000'000ull;
constexpr uint64_t kHash = 0x5eed0000c0ffee11ull;
constexpr uint64_t kNow = 1000 * kSec;  // every wait below began before 200 s: past 60 s
constexpr int kFloat32 = 7;
constexpr uint64_t kStream = 0x7f00;

// One process per rank (pid 1000 + rank) holding rank r of kHash, no collectives.
shm::JobSnapshot Job(int nranks) {
  shm::JobSnapshot job;
  for (int r = 0; r < nranks; ++r) {
    shm::ProcessView p;
    p.pid = 1000 + r;
    p.alive = true;
    p.host = "hostA";
    p.global_rank = r;
    p.local_rank = r;
    p.world_size = nranks;
    shm::CommView c;
    c.state = shm::CommState::kReady;
    c.comm_hash = kHash;
    c.rank = r;
    c.nranks = nranks;
    c.device = r;
    c.init_start_ns = 1 * kSec;
    c.init_done_ns = 2 * kSec;
    p.comms.push_back(c);
    job.processes.push_back(p);
  }
  return job;
}

// Rank `rank` posts its `seq`-th `op` towards `peer` at `at_sec`; complete_sec 0: pending.
void Post(shm::JobSnapshot& job, int rank, shm::Op op, int peer, uint64_t seq, uint64_t at_sec,
          uint64_t complete_sec = 0, uint64_t count = 1024, uint32_t flags = 0) {
  shm::CommView& c = job.processes.at(rank).comms.at(0);
  shm::RecordView r;
  r.ring_index = c.records_written++;
  r.op = op;
  r.datatype = kFloat32;
  r.seq = seq;
  r.count = count;
  r.root_or_peer = peer;
  r.flags = flags;
  r.stream = kStream;
  r.enqueue_ns = at_sec * kSec;
  r.complete_ns = complete_sec * kSec;
  // Its position among the rank's P2P ops on the communicator, as the preload numbers it.
  r.framework_seq = 1 + std::count_if(c.records.begin(), c.records.end(),
                                      [](const shm::RecordView& o) { return shm::IsPointToPoint(o.op); });
  c.records.push_back(r);
}

// `n` completed rounds of Send #k to `to` on `from` and Recv #k from `from` on `to`.
void History(shm::JobSnapshot& job, int from, int to, uint64_t n) {
  for (uint64_t k = 1; k <= n; ++k) {
    Post(job, from, shm::Op::kSend, to, k, 10 + k, 11 + k);
    Post(job, to, shm::Op::kRecv, from, k, 10 + k, 11 + k);
  }
}

std::vector<detect::Verdict> Live(const shm::JobSnapshot& job, uint64_t now = kNow) {
  return detect::Classify(watch::FactsFromSnapshot(job), detect::DetectConfig{}, now);
}

analyze::Analysis Offline(const shm::JobSnapshot& job) {
  std::vector<dump::RankDump> dumps;
  for (const shm::ProcessView& p : job.processes) {
    dump::RankDump d;
    d.incident.id = "p2p";
    d.process.pid = p.pid;
    d.process.host = p.host;
    d.process.alive = p.alive;
    watch::AddPublishedState(watch::ProcessFactsFromSnapshot(p), &d);
    dumps.push_back(dump::ParseDump(dump::ToJson(d).dump()).value());  // what a reader gets back from the file
  }
  return testing::AnalyzeDumps(dumps);
}

// The live verdict, after checking that offline agrees with it in every field.
detect::Verdict Judge(const shm::JobSnapshot& job) {
  const std::vector<detect::Verdict> live = Live(job);
  REQUIRE_FALSE(live.empty());
  const analyze::Analysis offline = Offline(job);
  const detect::Verdict& v = live.front();
  CHECK(offline.verdict.kind == v.kind);
  CHECK(offline.verdict.comm_hash == v.comm_hash);
  CHECK(offline.verdict.seq == v.seq);
  CHECK(offline.verdict.op == v.op);
  CHECK(offline.verdict.framework_seq == v.framework_seq);
  CHECK(detect::AllCulpritRanks(offline.verdict) == v.culprit_ranks);
  CHECK(offline.verdict.other_ranks == v.other_ranks);
  REQUIRE(offline.p2p.size() == v.p2p.size());
  for (size_t i = 0; i < v.p2p.size(); ++i) {
    CHECK(offline.p2p[i].rank == v.p2p[i].rank);
    CHECK(offline.p2p[i].op == v.p2p[i].op);
    CHECK(offline.p2p[i].peer == v.p2p[i].peer);
    CHECK(offline.p2p[i].seq == v.p2p[i].seq);
    CHECK(offline.p2p[i].posted == v.p2p[i].posted);
    CHECK(offline.p2p[i].complete == v.p2p[i].complete);
  }
  return v;
}

bool Mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_CASE("live and offline recognise P2P ops by one predicate, agreeing with the shm op codes", "[p2p]") {
  for (int code = 0; code <= 13; ++code) {
    const auto op = static_cast<shm::Op>(code);
    const detect::P2PDirection direction = detect::P2PDirectionOf(shm::OpName(op));
    CHECK(detect::IsPointToPoint(shm::OpName(op)) == shm::IsPointToPoint(op));
    if (shm::IsPointToPoint(op)) {
      CHECK((direction == detect::P2PDirection::kSend) == shm::IsSendLike(op));
    }
  }
}

TEST_CASE("p2p_straggler: the stage that did not send is the culprit, its receiver the victim", "[p2p]") {
  shm::JobSnapshot job = Job(2);
  History(job, 0, 1, 2);
  Post(job, 1, shm::Op::kRecv, 0, 3, 100);  // rank 0 never posts Send #3
  // Rank 1's host thread is blocked behind its Recv: a victim, never sync_stuck.
  job.processes[1].sync_slots.push_back(shm::SyncView{1001, shm::SyncKind::kStream, kStream, 1, 101 * kSec, 0});
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PStraggler);
  CHECK(v.culprit_ranks == Ranks{0});
  CHECK(v.other_ranks == Ranks{1});
  CHECK(v.seq == 3);
  CHECK(v.op == "Recv");
  REQUIRE(v.p2p.size() == 2);
  CHECK_FALSE(v.p2p[0].posted);  // rank 0 owes Send #3 to rank 1
  CHECK(v.p2p[0].op == "Send");
  CHECK(v.p2p[1].rank == 1);
  CHECK(Mentions(v.summary, "rank 1 waits in Recv #3 from rank 0"));
  for (const detect::Verdict& other : Live(job)) CHECK(other.kind != detect::VerdictKind::kSyncStuck);
}

TEST_CASE("a P2P verdict carries the waiter's P2P ordinal on the communicator (framework p2p seq)", "[p2p]") {
  shm::JobSnapshot job = Job(2);
  History(job, 0, 1, 2);
  History(job, 1, 0, 1);
  Post(job, 1, shm::Op::kRecv, 0, 3, 100);  // rank 1's 4th P2P op: Recv, Recv, Send, Recv
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PStraggler);
  CHECK(v.seq == 3);
  CHECK(v.framework_seq == 4);
  CHECK(Mentions(analyze::RenderTextReport(Offline(job)), "Recv #3 (numbered per peer) (framework p2p seq 4)"));
}

TEST_CASE("p2p_straggler: a sender waiting for a receiver that never posts blames the receiver", "[p2p]") {
  shm::JobSnapshot job = Job(2);
  Post(job, 0, shm::Op::kSend, 1, 1, 100);
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PStraggler);
  CHECK(v.culprit_ranks == Ranks{1});
}

TEST_CASE("p2p_straggler: along a chain of waits the rank that waits on nobody is blamed", "[p2p]") {
  shm::JobSnapshot job = Job(3);  // 0 waits on 1, 1 waits on 2, 2 waits on nothing
  Post(job, 0, shm::Op::kRecv, 1, 1, 100);
  Post(job, 1, shm::Op::kRecv, 2, 1, 90);
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PStraggler);
  CHECK(v.culprit_ranks == Ranks{2});
  CHECK(v.other_ranks == Ranks{0, 1});
}

TEST_CASE("p2p_straggler: micro-batches in flight match in order, the k-th with the k-th", "[p2p]") {
  shm::JobSnapshot job = Job(2);
  History(job, 0, 1, 3);
  for (uint64_t k = 4; k <= 6; ++k) Post(job, 0, shm::Op::kSend, 1, k, 50 + k, 60 + k);  // sent ahead
  for (uint64_t k = 4; k <= 7; ++k) Post(job, 1, shm::Op::kRecv, 0, k, 50 + k, k < 7 ? 60 + k : 0);
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PStraggler);
  CHECK(v.culprit_ranks == Ranks{0});
  CHECK(v.seq == 7);
}

TEST_CASE("p2p_deadlock: both stages receive first", "[p2p]") {
  shm::JobSnapshot job = Job(2);
  History(job, 0, 1, 2);
  Post(job, 0, shm::Op::kRecv, 1, 1, 100);
  Post(job, 1, shm::Op::kRecv, 0, 3, 100);
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PDeadlock);
  CHECK(v.culprit_ranks == Ranks{0, 1});
  REQUIRE(v.p2p.size() == 2);
  CHECK(v.p2p[0].rank == 0);
  CHECK(v.p2p[0].op == "Recv");
  CHECK(v.p2p[1].rank == 1);
  CHECK(Mentions(v.summary, "cycle rank 0 -> rank 1 -> rank 0"));
}

TEST_CASE("p2p_deadlock: both stages receive then send on one stream (torch's dist.recv, dist.send)", "[p2p]") {
  // Nothing blocks the host: every op is posted, but each Send is queued behind its Recv, plain
  // or each in a group of its own, as torch issues them.
  for (uint32_t recv_flags : {0u, shm::kRecordInGroup | shm::RecordGroupBits(7)}) {
    const uint32_t send_flags = recv_flags == 0 ? 0 : shm::kRecordInGroup | shm::RecordGroupBits(8);
    shm::JobSnapshot job = Job(2);
    for (int r = 0; r < 2; ++r) {
      Post(job, r, shm::Op::kRecv, 1 - r, 1, 100, 0, 1024, recv_flags);
      Post(job, r, shm::Op::kSend, 1 - r, 1, 101, 0, 1024, send_flags);
    }
    const detect::Verdict v = Judge(job);
    CHECK(v.kind == detect::VerdictKind::kP2PDeadlock);
    CHECK(v.culprit_ranks == Ranks{0, 1});
    CHECK(v.op == "Recv");
  }
}

TEST_CASE("grouped Recv and Send (batch_isend_irecv) progress together: a hang, never a deadlock", "[p2p]") {
  shm::JobSnapshot job = Job(2);
  for (int r = 0; r < 2; ++r) {  // one group per rank (serial 3, 9), and a writer without serials
    const uint32_t group = r == 0 ? shm::kRecordInGroup | shm::RecordGroupBits(3) : shm::kRecordInGroup;
    Post(job, r, shm::Op::kRecv, 1 - r, 1, 100, 0, 1024, group);
    Post(job, r, shm::Op::kSend, 1 - r, 1, 101, 0, 1024, group);
  }
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PHang);
  CHECK(v.culprit_ranks == Ranks{0, 1});
}

TEST_CASE("p2p_deadlock: a 3-rank ring in which each rank receives from the previous before sending", "[p2p]") {
  shm::JobSnapshot job = Job(3);
  for (int r = 0; r < 3; ++r) Post(job, r, shm::Op::kRecv, (r + 2) % 3, 1, 100 + r);
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PDeadlock);
  CHECK(v.culprit_ranks == Ranks{0, 1, 2});
  CHECK(v.p2p.size() == 3);
  CHECK(Mentions(v.summary, "cycle rank 0 -> rank 2 -> rank 1 -> rank 0"));
}

TEST_CASE("p2p_deadlock: a ring of 4096 ranks is found (iteratively), its evidence bounded", "[p2p]") {
  constexpr int kRanks = 4096;
  detect::JobFacts facts;
  facts.scope = detect::Scope::kJob;
  for (int r = 0; r < kRanks; ++r) {
    detect::ProcessFacts p;
    p.pid = 1000 + r;
    p.host = "hostA";
    detect::CommFacts c;
    c.comm_hash = kHash;
    c.rank = r;
    c.nranks = kRanks;
    c.init_started_ns = 1;
    c.init_done_ns = 2;
    detect::RecordFacts recv;
    recv.seq = 1;
    recv.op = "Recv";
    recv.peer = (r + kRanks - 1) % kRanks;
    recv.enqueue_ns = 100;
    c.p2p_records.push_back(recv);
    p.comms.push_back(c);
    facts.processes.push_back(p);
  }
  const std::vector<detect::Verdict> verdicts = detect::Classify(facts, detect::DetectConfig{}, 0);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == detect::VerdictKind::kP2PDeadlock);
  CHECK(verdicts[0].culprit_ranks.size() == kRanks);
  CHECK(verdicts[0].p2p.size() == 16);
  CHECK(verdicts[0].summary.size() < 4096);
}

TEST_CASE("p2p_hang: both sides posted the matching ops and neither completed", "[p2p]") {
  shm::JobSnapshot job = Job(2);
  History(job, 0, 1, 4);
  Post(job, 0, shm::Op::kSend, 1, 5, 100);
  Post(job, 1, shm::Op::kRecv, 0, 5, 100);
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PHang);
  CHECK(v.culprit_ranks == Ranks{0, 1});
  CHECK(v.seq == 5);
  CHECK(Mentions(v.summary, "neither completed"));
  const analyze::Analysis a = Offline(job);
  CHECK(std::any_of(a.hints.begin(), a.hints.end(), [](const analyze::Hint& h) { return h.id == "p2p_transport"; }));
  CHECK(Mentions(analyze::RenderTextReport(a), "rank 1: waits in Recv #5 from rank 0"));
}

TEST_CASE("p2p_mismatch: a Send's count differs from its Recv's", "[p2p]") {
  shm::JobSnapshot job = Job(2);
  Post(job, 0, shm::Op::kSend, 1, 1, 100, 0, 1024);
  Post(job, 1, shm::Op::kRecv, 0, 1, 100, 0, 4096);
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PMismatch);
  CHECK(v.culprit_ranks == Ranks{0, 1});
  CHECK(Mentions(v.summary, "count=1024"));
  CHECK(Mentions(v.summary, "count=4096"));
}

TEST_CASE("grouped all-to-all: the rank that skipped a peer is the culprit, judged per pair", "[p2p]") {
  constexpr int kRanks = 4;
  constexpr int kSkipper = 2;
  constexpr int kSkipped = 0;
  shm::JobSnapshot job = Job(kRanks);
  const bool blocked_group = true;
  for (int r = 0; r < kRanks; ++r) {
    for (int peer = 0; peer < kRanks; ++peer) {
      if (peer == r) continue;
      if (r == kSkipper && peer == kSkipped) continue;  // the bug: rank 2 leaves rank 0 out
      // Rank 0's group cannot complete (one of its ops has no partner): all its ops pend, and
      // its partners' receives from it pend too.
      const bool pending = r == kSkipped || (blocked_group && peer == kSkipped);
      Post(job, r, shm::Op::kSend, peer, 1, 100, pending ? 0 : 101, 1024, shm::kRecordInGroup);
      Post(job, r, shm::Op::kRecv, peer, 1, 100, pending ? 0 : 101, 1024, shm::kRecordInGroup);
    }
  }
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PStraggler);
  CHECK(v.culprit_ranks == Ranks{kSkipper});
  CHECK(v.other_ranks == Ranks{kSkipped});
}

TEST_CASE("grouped all-to-all: a rank that went on past the op it owes is the culprit, not a cycle", "[p2p]") {
  // Rank 2 leaves rank 0 out of every group from step 1 on. Rank 0 waits on rank 2 (step 1);
  // ranks 1 and 3 wait on rank 0 (step 2); rank 2 finished step 2 with ranks 1 and 3 and waits
  // on them in step 3. The waits form the cycle 0 -> 2 -> 1 -> 0, but rank 2 went on past
  // the op rank 0 waits for: it skipped it, and is the one to blame.
  shm::JobSnapshot job = Job(4);
  auto exchange = [&job](int r, int peer, uint64_t seq, uint64_t at, uint64_t done) {
    Post(job, r, shm::Op::kSend, peer, seq, at, done, 1024, shm::kRecordInGroup);
    Post(job, r, shm::Op::kRecv, peer, seq, at, done, 1024, shm::kRecordInGroup);
  };
  for (int r = 0; r < 4; ++r) {
    for (int peer = 0; peer < 4; ++peer) {
      if (peer != r) exchange(r, peer, 1, 50, 51);  // step 0: everyone with everyone
    }
  }
  for (int peer : {1, 3}) exchange(0, peer, 2, 100, 101);  // step 1: rank 0's ops with 1, 3 complete,
  exchange(0, 2, 2, 100, 0);                                 // with 2 pending
  for (int r : {1, 3}) {
    exchange(r, 0, 2, 100, 101);
    exchange(r, 2, 2, 100, 101);
    exchange(r, 4 - r, 2, 100, 101);
    exchange(r, 0, 3, 110, 0);      // step 2: stuck on rank 0, still at step 1
    exchange(r, 2, 3, 110, 111);
    exchange(r, 4 - r, 3, 110, 0);
  }
  for (int peer : {1, 3}) {
    exchange(2, peer, 2, 100, 101);
    exchange(2, peer, 3, 110, 111);
    exchange(2, peer, 4, 120, 0);   // step 3: waits on ranks 1 and 3
  }
  const detect::Verdict v = Judge(job);
  CHECK(v.kind == detect::VerdictKind::kP2PStraggler);
  CHECK(v.culprit_ranks == Ranks{2});
  CHECK(v.other_ranks == Ranks{0, 1, 3});
  CHECK(v.seq == 2);
}

TEST_CASE("P2P waits younger than the stall threshold are silent live", "[p2p]") {
  shm::JobSnapshot job = Job(2);
  Post(job, 1, shm::Op::kRecv, 0, 1, 100);
  Post(job, 0, shm::Op::kSend, 1, 1, 100);
  CHECK(Live(job, 159 * kSec).empty());  // 59 s < 60 s
  CHECK_FALSE(Live(job, 161 * kSec).empty());
}

TEST_CASE("a healthy pipeline, every op complete, is silent live and offline", "[p2p]") {
  shm::JobSnapshot job = Job(3);
  History(job, 0, 1, 20);
  History(job, 1, 2, 20);
  CHECK(Live(job).empty());
  CHECK(Offline(job).verdict.kind == detect::VerdictKind::kNone);
}

TEST_CASE("P2P completion: captured or failed owe none; untracked and aborted are unknown, never waits", "[p2p]") {
  for (uint32_t flags : {shm::kRecordCaptured, shm::kRecordFailed, shm::kRecordUntracked, shm::kRecordAborted}) {
    shm::JobSnapshot job = Job(2);
    Post(job, 1, shm::Op::kRecv, 0, 1, 100, 0, 1024, flags);
    CHECK(Live(job).empty());
    CHECK(Offline(job).verdict.kind == detect::VerdictKind::kNone);
  }
  // An aborted op's event may fire; it still did not complete, and is no wait either.
  detect::CommFacts comm;
  detect::RecordFacts aborted;
  aborted.op = "Recv";
  aborted.enqueue_ns = 5;
  aborted.complete_ns = 9;
  aborted.untracked = true;
  CHECK(detect::P2PStateOf(aborted, comm) == detect::P2PState::kUnknown);
  // A later op on the same stream seen complete completes it (stream order).
  detect::RecordFacts later = aborted;
  later.enqueue_ns = 7;
  later.untracked = false;
  comm.p2p_records = {aborted, later};
  CHECK(detect::P2PStateOf(aborted, comm) == detect::P2PState::kComplete);
}

TEST_CASE("a pending P2P op behind a later completed op on its stream is complete", "[p2p]") {
  shm::JobSnapshot job = Job(2);
  Post(job, 1, shm::Op::kRecv, 0, 1, 100);        // its event was lost,
  Post(job, 1, shm::Op::kRecv, 0, 2, 110, 111);   // but the next one completed
  Post(job, 0, shm::Op::kSend, 1, 1, 100, 101);
  Post(job, 0, shm::Op::kSend, 1, 2, 110, 111);
  CHECK(Live(job).empty());
}

TEST_CASE("sync_stuck no longer says no collective pending while a P2P op is pending", "[p2p]") {
  shm::JobSnapshot job = Job(1);
  job.processes[0].comms[0].nranks = 2;  // its peer is on another host
  Post(job, 0, shm::Op::kRecv, 1, 1, 100);
  job.processes[0].sync_slots.push_back(shm::SyncView{1000, shm::SyncKind::kStream, kStream, 0, 101 * kSec, 0});
  CHECK(Live(job).empty());  // the wait is on a rank this host cannot see: no verdict, no sync_stuck
  job.processes[0].comms[0].records.back().complete_ns = 102 * kSec;  // once the Recv completed,
  const std::vector<detect::Verdict> after = Live(job);               // the sync is unexplained
  REQUIRE(after.size() == 1);
  CHECK(after[0].kind == detect::VerdictKind::kSyncStuck);
  CHECK(Mentions(after[0].summary, "no NCCL operation pending"));
}

}  // namespace
}  // namespace ncclwatch
