// The same facts give the same verdict live and offline: each case below is one state of a
// job as detect::JobFacts. The live side classifies it as the watchdog does (Scope::kHost,
// a clock well past every threshold); the offline side writes each process as a dump,
// round-trips it through the JSON schema, and runs `analyze` over the dumps. Both must give the
// verdict each case expects (its kind, collective number, op and culprits, written down from the
// rules, not from a run), and agree on the communicator and the waiters too.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/detect/detector.h"
#include "core/dump/dump_json.h"
#include "tests/core/analyze/analyze_dumps.h"
#include "tests/core/detect/view_builder.h"

namespace ncclwatch {
namespace {

using detect::testing::Issue;
using detect::testing::kSec;

constexpr uint64_t kHash = 0xabcdef0123456789ull;
constexpr uint64_t kNow = 1000 * kSec;  // every state below began before 200 s

// What a dump keeps of one process: exactly its facts (the dump's own types), through the file.
dump::RankDump DumpOf(const detect::ProcessFacts& p) {
  dump::RankDump d;
  d.incident.id = "one-classifier";
  d.process.pid = p.pid;
  d.process.host = p.host;
  d.process.global_rank = p.global_rank;
  d.process.alive = p.alive;
  d.process.attempt = p.attempt;
  d.process.exit = p.exit;
  d.host_syncs = p.syncs;
  d.comms = p.comms;
  return dump::ParseDump(dump::ToJson(d).dump()).value();  // what a reader gets back from the file
}

// What a case's facts must be judged, by the rules (core/detect/comm_rules.h).
struct Expected {
  detect::VerdictKind kind;
  uint64_t seq;
  std::string op;
  std::vector<int> culprits;
};

void RequireSameVerdict(const detect::JobFacts& facts, const Expected& expected) {
  detect::DetectConfig config;  // 60 s threshold: every case is older
  const std::vector<detect::Verdict> live = detect::Classify(facts, config, kNow);
  REQUIRE_FALSE(live.empty());
  std::vector<dump::RankDump> dumps;
  for (const detect::ProcessFacts& p : facts.processes) dumps.push_back(DumpOf(p));
  const analyze::Analysis offline = testing::AnalyzeDumps(dumps);
  const detect::Verdict& v = live.front();
  CHECK(detect::ToString(v.kind) == detect::ToString(expected.kind));
  CHECK(v.seq == expected.seq);
  CHECK(v.op == expected.op);
  CHECK(v.culprit_ranks == expected.culprits);
  CHECK(detect::ToString(offline.verdict.kind) == detect::ToString(v.kind));
  CHECK(offline.verdict.comm_hash == v.comm_hash);
  CHECK(offline.verdict.seq == v.seq);
  CHECK(offline.verdict.op == v.op);
  CHECK(detect::AllCulpritRanks(offline.verdict) == v.culprit_ranks);
  CHECK(offline.verdict.other_ranks == v.other_ranks);
  CHECK(offline.verdict.graph == v.graph);
  CHECK(offline.verdict.graph_label == v.graph_label);
}

// Rank `rank` captured #10 into a graph (key 0x9a) and launched replays 1..`launched` of it,
// the first `completed` of them complete.
void Replays(detect::JobFacts& job, int rank, uint64_t launched, uint64_t completed) {
  detect::CommFacts& comm = job.processes.at(rank).comms.at(0);
  Issue(comm, 10, 100 * kSec);
  comm.records.back().captured = true;
  comm.records.back().never_completes = true;
  comm.last_completed_seq = 10;
  for (uint64_t k = 1; k <= launched; ++k) {
    detect::ReplayFacts r;
    r.graph = 0x9a;
    r.replay = k;
    r.first_seq = 10;
    r.ops = 1;
    r.op_names = {"AllReduce"};
    r.enqueue_ns = (110 + k) * kSec;
    r.complete_ns = k <= completed ? r.enqueue_ns + kSec / 100 : 0;
    comm.replays.push_back(r);
  }
}

// `n` ranks of kHash, each with #1..#9 done (one per second from 10 s).
detect::JobFacts Job(int n) { return detect::testing::HealthyJob(kHash, n, 9); }

detect::CommFacts& CommOf(detect::JobFacts& job, int rank) { return job.processes.at(rank).comms.at(0); }

}  // namespace

TEST_CASE("mismatch: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(3);
  for (int r = 0; r < 3; ++r) Issue(CommOf(job, r), 10, 100 * kSec, 0, r == 2 ? "Broadcast" : "AllReduce", 1024, r == 2 ? 0 : -1);
  // Ranks 0-1 are the majority: rank 2's Broadcast at #10 is the culprit.
  RequireSameVerdict(job, {detect::VerdictKind::kMismatch, 10, "Broadcast", {2}});
}

TEST_CASE("rank_exited: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(3);
  Issue(CommOf(job, 0), 10, 100 * kSec);
  Issue(CommOf(job, 2), 10, 100 * kSec);
  job.processes[1].alive = false;
  job.processes[1].exit.recorded = true;
  // Ranks 0 and 2 wait in #10 for rank 1, which exited after #9.
  RequireSameVerdict(job, {detect::VerdictKind::kRankExited, 10, "AllReduce", {1}});
}

TEST_CASE("a rank that left its communicator: identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  Issue(CommOf(job, 0), 10, 100 * kSec);
  CommOf(job, 1).lifecycle = detect::CommLifecycle::kDestroyed;
  // Rank 0 waits in #10 for rank 1, which left the communicator after #9.
  RequireSameVerdict(job, {detect::VerdictKind::kRankExited, 10, "AllReduce", {1}});
}

TEST_CASE("init_hang: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(3);
  for (int r = 0; r < 3; ++r) {
    detect::CommFacts late = detect::testing::MakeComm(kHash + 1, r, 3);
    late.init_started_ns = 100 * kSec;
    late.init_done_ns = r == 1 ? 101 * kSec : 0;
    job.processes[r].comms.push_back(late);
  }
  // The second communicator: only rank 1 finished its init.
  RequireSameVerdict(job, {detect::VerdictKind::kInitHang, 0, "init", {0, 2}});
}

TEST_CASE("straggler: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(4);
  for (int r : {0, 1, 3}) Issue(CommOf(job, r), 10, 100 * kSec);
  // Ranks 0, 1 and 3 wait in #10; rank 2 never issued it.
  RequireSameVerdict(job, {detect::VerdictKind::kStraggler, 10, "AllReduce", {2}});
}

TEST_CASE("collective_hang: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(4);
  for (int r = 0; r < 4; ++r) Issue(CommOf(job, r), 10, 100 * kSec, r == 3 ? 101 * kSec : 0);
  // Every rank issued #10; only rank 3 completed it.
  RequireSameVerdict(job, {detect::VerdictKind::kCollectiveHang, 10, "AllReduce", {0, 1, 2}});
}

TEST_CASE("sync_stuck: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  job.processes[1].syncs.push_back(detect::SyncFacts{150 * kSec, detect::SyncTarget::kStream, 0x7f00});
  // Rank 1's host thread has waited on a stream since 150 s.
  RequireSameVerdict(job, {detect::VerdictKind::kSyncStuck, 0, "stream", {1}});
}

TEST_CASE("stale_unique_id (a re-created group): identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);  // kHash used for #1..#9, then destroyed by both
  for (int r = 0; r < 2; ++r) {
    CommOf(job, r).lifecycle = detect::CommLifecycle::kDestroyed;
    detect::CommFacts again = detect::testing::MakeComm(r == 0 ? 0x0e1 : kHash, r, 2);
    again.init_started_ns = 150 * kSec;
    again.init_done_ns = 0;
    job.processes[r].comms.push_back(again);
  }
  // Rank 1 initialises kHash again, from the id the group before left; rank 0 a new one.
  RequireSameVerdict(job, {detect::VerdictKind::kStaleUniqueId, 0, "init", {1}});
}

TEST_CASE("stale_unique_id (a torchrun restart): identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);  // attempt 0, gone
  for (detect::ProcessFacts& p : job.processes) {
    p.attempt.restart = 0;
    p.alive = false;
  }
  for (int r = 0; r < 2; ++r) {
    detect::ProcessFacts p = detect::testing::MakeProcess(2000 + r, r);
    p.attempt.restart = 1;
    detect::CommFacts comm = detect::testing::MakeComm(r == 0 ? 0x0e1 : kHash, r, 2);
    comm.init_started_ns = 150 * kSec;
    comm.init_done_ns = 0;
    p.comms.push_back(comm);
    job.processes.push_back(p);
  }
  // Rank 1 initialises kHash again, from the id the group before left; rank 0 a new one.
  RequireSameVerdict(job, {detect::VerdictKind::kStaleUniqueId, 0, "init", {1}});
}

TEST_CASE("replay_straggler: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(3);
  Replays(job, 0, 7, 6);
  Replays(job, 1, 6, 6);
  Replays(job, 2, 7, 6);
  // Ranks 0 and 2 launched replay 7 of the graph; rank 1 stopped after 6.
  RequireSameVerdict(job, {detect::VerdictKind::kReplayStraggler, 7, "AllReduce", {1}});
}

TEST_CASE("replay_hang: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  Replays(job, 0, 5, 4);
  Replays(job, 1, 5, 4);
  // Both launched replay 5; neither saw it complete.
  RequireSameVerdict(job, {detect::VerdictKind::kReplayHang, 5, "AllReduce", {0, 1}});
}

TEST_CASE("rank_exited in a replay: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  Replays(job, 0, 3, 2);
  Replays(job, 1, 2, 2);
  job.processes[1].alive = false;
  // Rank 0 waits in replay 3, which rank 1 never launched before it died.
  RequireSameVerdict(job, {detect::VerdictKind::kRankExited, 3, "AllReduce", {1}});
}

TEST_CASE("mismatch at capture: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  Replays(job, 0, 2, 2);
  Replays(job, 1, 2, 2);
  CommOf(job, 1).records.back().count = 7;
  // The records captured at #10 differ in count: two ranks, no majority.
  RequireSameVerdict(job, {detect::VerdictKind::kMismatch, 10, "AllReduce", {0, 1}});
}

TEST_CASE("a replay stuck behind an eager op: identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  for (int rank : {0, 1}) {
    Replays(job, rank, 2, 2);
    Issue(CommOf(job, rank), 11, 150 * kSec);  // eager #11, never completes
    detect::ReplayFacts third = CommOf(job, rank).replays.back();
    third.replay = 3;
    third.enqueue_ns = 155 * kSec;  // launched after #11: it runs behind it
    third.complete_ns = 0;
    CommOf(job, rank).replays.push_back(third);
  }
  // The eager op is the verdict (ops of a communicator run in issue order), the replay a note.
  RequireSameVerdict(job, {detect::VerdictKind::kCollectiveHang, 11, "AllReduce", {0, 1}});
  const std::string note =
      "replay 3 of graph [AllReduce from #10 on comm 0xabcdef0123456789] waits behind #11 AllReduce: ranks 0-1 "
      "launched the replay after issuing #11";
  const std::vector<detect::Verdict> live = detect::Classify(job, detect::DetectConfig{}, kNow);
  REQUIRE_FALSE(live.empty());
  CHECK(std::find(live.front().notes.begin(), live.front().notes.end(), note) != live.front().notes.end());
  std::vector<dump::RankDump> dumps;
  for (const detect::ProcessFacts& p : job.processes) dumps.push_back(DumpOf(p));
  const analyze::Analysis offline = testing::AnalyzeDumps(dumps);
  CHECK(std::find(offline.notes.begin(), offline.notes.end(), note) != offline.notes.end());
}

TEST_CASE("a healthy job: no verdict live, none offline", "[one_classifier]") {
  detect::JobFacts job = Job(4);
  CHECK(detect::Classify(job, detect::DetectConfig{}, kNow).empty());
  std::vector<dump::RankDump> dumps;
  for (const detect::ProcessFacts& p : job.processes) dumps.push_back(DumpOf(p));
  CHECK(testing::AnalyzeDumps(dumps).verdict.kind == detect::VerdictKind::kNone);
}

}  // namespace ncclwatch
