// The same facts give the same verdict live and offline: each case below is one state of a
// job as detect::JobFacts. The live side classifies it as the watchdog does (Scope::kHost,
// a clock well past every threshold); the offline side writes each process as a dump,
// round-trips it through the JSON schema, and runs `analyze` over the dumps. Kind,
// communicator, collective number, op, culprits and waiters must agree for every kind.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/detect/detector.h"
#include "core/dump/dump_json.h"
#include "tests/analyze/analyze_dumps.h"
#include "tests/detect/view_builder.h"

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
  d.process.exit = p.exit;
  d.host_syncs = p.syncs;
  d.comms = p.comms;
  return dump::FromJson(dump::ToJson(d));  // what a reader gets back from the file
}

void RequireSameVerdict(const detect::JobFacts& facts) {
  detect::DetectConfig config;  // 60 s threshold: every case is older
  const std::vector<detect::Verdict> live = detect::Classify(facts, config, kNow);
  REQUIRE_FALSE(live.empty());
  std::vector<dump::RankDump> dumps;
  for (const detect::ProcessFacts& p : facts.processes) dumps.push_back(DumpOf(p));
  const analyze::Analysis offline = testing::AnalyzeDumps(dumps);
  const detect::Verdict& v = live.front();
  CHECK(offline.verdict.kind == v.kind);
  CHECK(offline.verdict.comm_hash == v.comm_hash);
  CHECK(offline.verdict.seq == v.seq);
  CHECK(offline.verdict.op == v.op);
  CHECK(offline.verdict.ranks == v.culprit_ranks);
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
  RequireSameVerdict(job);
}

TEST_CASE("rank_exited: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(3);
  Issue(CommOf(job, 0), 10, 100 * kSec);
  Issue(CommOf(job, 2), 10, 100 * kSec);
  job.processes[1].alive = false;
  job.processes[1].exit.recorded = true;
  RequireSameVerdict(job);
}

TEST_CASE("a rank that left its communicator: identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  Issue(CommOf(job, 0), 10, 100 * kSec);
  CommOf(job, 1).lifecycle = detect::CommLifecycle::kDestroyed;
  RequireSameVerdict(job);
}

TEST_CASE("init_hang: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(3);
  for (int r = 0; r < 3; ++r) {
    detect::CommFacts late = detect::testing::MakeComm(kHash + 1, r, 3);
    late.init_started_ns = 100 * kSec;
    late.init_done_ns = r == 1 ? 101 * kSec : 0;
    job.processes[r].comms.push_back(late);
  }
  RequireSameVerdict(job);
}

TEST_CASE("straggler: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(4);
  for (int r : {0, 1, 3}) Issue(CommOf(job, r), 10, 100 * kSec);
  RequireSameVerdict(job);
}

TEST_CASE("collective_hang: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(4);
  for (int r = 0; r < 4; ++r) Issue(CommOf(job, r), 10, 100 * kSec, r == 3 ? 101 * kSec : 0);
  RequireSameVerdict(job);
}

TEST_CASE("sync_stuck: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  job.processes[1].syncs.push_back(detect::SyncFacts{150 * kSec, detect::SyncTarget::kStream, 0x7f00});
  RequireSameVerdict(job);
}

TEST_CASE("replay_straggler: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(3);
  Replays(job, 0, 7, 6);
  Replays(job, 1, 6, 6);
  Replays(job, 2, 7, 6);
  RequireSameVerdict(job);
}

TEST_CASE("replay_hang: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  Replays(job, 0, 5, 4);
  Replays(job, 1, 5, 4);
  RequireSameVerdict(job);
}

TEST_CASE("rank_exited in a replay: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  Replays(job, 0, 3, 2);
  Replays(job, 1, 2, 2);
  job.processes[1].alive = false;
  RequireSameVerdict(job);
}

TEST_CASE("mismatch at capture: identical facts, identical verdict live and offline", "[one_classifier]") {
  detect::JobFacts job = Job(2);
  Replays(job, 0, 2, 2);
  Replays(job, 1, 2, 2);
  CommOf(job, 1).records.back().count = 7;
  RequireSameVerdict(job);
}

TEST_CASE("a healthy job: no verdict live, none offline", "[one_classifier]") {
  detect::JobFacts job = Job(4);
  CHECK(detect::Classify(job, detect::DetectConfig{}, kNow).empty());
  std::vector<dump::RankDump> dumps;
  for (const detect::ProcessFacts& p : job.processes) dumps.push_back(DumpOf(p));
  CHECK(testing::AnalyzeDumps(dumps).verdict.kind == detect::VerdictKind::kNone);
}

}  // namespace ncclwatch
