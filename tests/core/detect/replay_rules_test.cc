// CUDA graph replays in the one classifier, with crafted facts: the straggler of a replay, a
// hung replay, a mismatch at capture, a replay stuck behind an eager op (and the reverse), a
// rank that exited while its peers wait in a replay, and what is healthy.
#include <algorithm>
#include <catch2/catch.hpp>

#include "core/detect/detector.h"
#include "core/detect/incident_tracker.h"
#include "core/detect/pending.h"
#include "core/detect/replay_state.h"
#include "core/detect/sync_rule.h"
#include "tests/core/detect/view_builder.h"

namespace ncclwatch::detect {
namespace {

using namespace ncclwatch::detect::testing;
using Ranks = std::vector<int>;

constexpr uint64_t kComm = 0xC0FFEE;
constexpr uint64_t kGraph = 0x9e3779b97f4a7c15;
const DetectConfig kConfig;  // 60 s threshold

// Rank `comm` launched replay `replay` of kGraph (a graph of one AllReduce captured as #2).
ReplayFacts& Launch(CommFacts& comm, uint64_t replay, uint64_t enqueue_ns, uint64_t complete_ns = 0,
                    uint64_t graph = kGraph, uint64_t first_seq = 2) {
  ReplayFacts r;
  r.graph = graph;
  r.replay = replay;
  r.first_seq = first_seq;
  r.framework_seq = first_seq;
  r.ops = 1;
  r.op_names = {"AllReduce"};
  r.enqueue_ns = enqueue_ns;
  r.complete_ns = complete_ns;
  comm.replays.push_back(r);
  return comm.replays.back();
}

// Two ranks that ran eager #1, captured #2 into kGraph, and replayed it `done` times, replay k
// at 100 s + k, each complete 10 ms later.
JobFacts GraphJob(int nranks, uint64_t done) {
  JobFacts job = HealthyJob(kComm, nranks, 1);
  for (int rank = 0; rank < nranks; ++rank) {
    CommFacts& comm = CommOf(job, rank);
    Issue(comm, 2, 50 * kSec);
    comm.records.back().captured = true;
    comm.records.back().never_completes = true;
    comm.last_completed_seq = 2;  // what EffectiveLastCompleted makes of a captured op
    for (uint64_t k = 1; k <= done; ++k) Launch(comm, k, 100 * kSec + k * kSec, 100 * kSec + k * kSec + 10 * kMs);
  }
  return job;
}

bool Mentions(const Verdict& verdict, const std::string& text) {
  if (verdict.summary.find(text) != std::string::npos) return true;
  for (const std::string& note : verdict.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("replays that complete, or one younger than the threshold, are healthy", "[replays]") {
  JobFacts job = GraphJob(2, 30);
  CHECK(Classify(job, kConfig, 500 * kSec).empty());
  const uint64_t at = 200 * kSec;
  Launch(CommOf(job, 0), 31, at);  // rank 1 has not launched 31 yet, for less than the threshold
  CHECK(Classify(job, kConfig, at + 59 * kSec).empty());
  Launch(CommOf(job, 1), 31, at + 30 * kSec);  // both in flight, the last for 30 s
  CHECK(Classify(job, kConfig, at + 80 * kSec).empty());
}

TEST_CASE("replay_straggler: the rank that has not launched replay K, and where it stands", "[replays]") {
  JobFacts job = GraphJob(2, 57);
  const uint64_t at = 300 * kSec;
  Launch(CommOf(job, 0), 58, at);
  CHECK(Classify(job, kConfig, at + 59 * kSec).empty());

  const std::vector<Verdict> verdicts = Classify(job, kConfig, at + 61 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kReplayStraggler);
  CHECK(v.comm_hash == kComm);
  CHECK(v.seq == 58);
  CHECK(v.graph == kGraph);
  CHECK(v.graph_label == "graph [AllReduce from #2 on comm 0xc0ffee]");
  CHECK(v.op == "AllReduce");
  CHECK(v.framework_seq == 2);
  CHECK(v.culprit_ranks == Ranks{1});
  CHECK(v.other_ranks == Ranks{0});
  CHECK(v.since_ns == at);
  CHECK(v.summary ==
        "replay_straggler on comm 0xc0ffee: rank 1 has not launched replay 58 of graph [AllReduce from #2 on comm "
        "0xc0ffee]; rank 0 launched it 1m01s ago and waits");
  REQUIRE(v.rank_evidence.size() == 2);
  CHECK(v.rank_evidence[0].replays_launched == 58);
  CHECK(v.rank_evidence[0].replays_completed == 57);
  CHECK(v.rank_evidence[1].replays_launched == 57);
  CHECK(IncidentKeyOf(v).graph == kGraph);
  CHECK(ReplayGraphOf(v) == kGraph);
}

TEST_CASE("replay_straggler: a rank whose replays of the graph aged out is not blamed", "[replays]") {
  JobFacts job = GraphJob(3, 20);
  const uint64_t at = 300 * kSec;
  Launch(CommOf(job, 0), 21, at);
  // Rank 2 kept replays of other graphs only: whether it launched 21 is unknown.
  CommFacts& pushed_out = CommOf(job, 2);
  pushed_out.replays.clear();
  pushed_out.replays_dropped = 40;
  for (uint64_t k = 1; k <= 32; ++k) Launch(pushed_out, k, 250 * kSec + k * kMs, 250 * kSec + k * kMs + kMs, 0x77, 9);

  const std::vector<Verdict> verdicts = Classify(job, kConfig, at + 61 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kReplayStraggler);
  CHECK(verdicts[0].culprit_ranks == Ranks{1});
  CHECK(Mentions(verdicts[0], "rank 2: no replay of this graph kept"));
  // With only the unknown rank behind, nobody is blamed.
  Launch(CommOf(job, 1), 21, at + kSec);
  CHECK(Classify(job, kConfig, at + 61 * kSec).empty());
}

TEST_CASE("replay_hang: every rank launched replay K and it does not complete", "[replays]") {
  JobFacts job = GraphJob(2, 4);
  const uint64_t at = 300 * kSec;
  Launch(CommOf(job, 0), 5, at);
  Launch(CommOf(job, 1), 5, at + 2 * kSec);
  CHECK(Classify(job, kConfig, at + 61 * kSec).empty());  // the last launch is 59 s old

  const std::vector<Verdict> verdicts = Classify(job, kConfig, at + 63 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kReplayHang);
  CHECK(v.seq == 5);
  CHECK(v.graph == kGraph);
  CHECK(v.culprit_ranks == Ranks{0, 1});
  CHECK(v.since_ns == at + 2 * kSec);
  CHECK(v.summary ==
        "replay_hang on comm 0xc0ffee: replay 5 of graph [AllReduce from #2 on comm 0xc0ffee] launched by all 2 "
        "visible ranks has not completed after 1m01s on ranks 0-1");
  // A later replay of the graph seen complete completes it (launches run in order).
  Launch(CommOf(job, 0), 6, at + 3 * kSec, at + 70 * kSec);
  Launch(CommOf(job, 1), 6, at + 3 * kSec, at + 70 * kSec);
  CHECK(Classify(job, kConfig, at + 80 * kSec).empty());
}

TEST_CASE("replays: a failed launch is none, an untracked one is no wait", "[replays]") {
  JobFacts job = GraphJob(2, 4);
  const uint64_t at = 300 * kSec;
  Launch(CommOf(job, 0), 5, at).failed = true;
  CHECK(Classify(job, kConfig, at + 100 * kSec).empty());
  CHECK(ProgressOf(CommOf(job, 0), kGraph).launched == 4);
  Launch(CommOf(job, 0), 5, at + kSec).untracked = true;
  Launch(CommOf(job, 1), 5, at + kSec).untracked = true;
  CHECK(Classify(job, kConfig, at + 100 * kSec).empty());
  CHECK(OldestPendingReplay(CommOf(job, 0)) == nullptr);
}

TEST_CASE("replay_hang offline: thresholds count as passed; a rank without a dump is the straggler", "[replays]") {
  JobFacts job = GraphJob(3, 4);
  job.scope = Scope::kJob;
  for (int rank = 0; rank < 3; ++rank) Launch(CommOf(job, rank), 5, 300 * kSec);
  std::vector<Verdict> verdicts = Classify(job, kConfig, 0);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kReplayHang);
  CHECK(verdicts[0].culprit_ranks == Ranks{0, 1, 2});
  CHECK(verdicts[0].summary.find("launched by all 3 ranks with a dump has not completed on ranks 0-2") !=
        std::string::npos);

  job.processes.pop_back();  // rank 2 left no dump
  verdicts = Classify(job, kConfig, 0);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kReplayStraggler);
  CHECK(verdicts[0].culprit_ranks.empty());
  REQUIRE(verdicts[0].culprits_without_facts.size() == 1);
  CHECK(verdicts[0].culprits_without_facts[0].first == 2);
  CHECK(verdicts[0].other_ranks == Ranks{0, 1});
}

TEST_CASE("mismatch at capture: the ranks' captured ops differ at #N", "[replays]") {
  JobFacts job = GraphJob(2, 0);
  CommFacts& odd = CommOf(job, 1);
  odd.records.back().count = 512;  // rank 1 captured an all_reduce of another size
  const std::vector<Verdict> verdicts = Classify(job, kConfig, 60 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kMismatch);
  CHECK(v.seq == 2);
  CHECK(v.culprit_ranks == Ranks{0, 1});  // two ranks: no majority
  CHECK(v.summary.rfind("mismatch at capture on comm 0xc0ffee at #2: ", 0) == 0);
  CHECK(Mentions(v, "captured into a CUDA graph"));
  // An eager op's mismatch is not called one at capture.
  for (int rank : {0, 1}) {
    CommOf(job, rank).records.back().captured = false;
    CommOf(job, rank).records.back().never_completes = false;
  }
  const std::vector<Verdict> eager = Classify(job, kConfig, 60 * kSec);
  REQUIRE(eager.size() == 1);
  CHECK(eager[0].summary.rfind("mismatch on comm 0xc0ffee at #2: ", 0) == 0);
}

TEST_CASE("mismatch at capture from the graphs' keys once the captured records aged out", "[replays]") {
  JobFacts job = GraphJob(3, 3);
  for (int rank = 0; rank < 3; ++rank) {
    CommFacts& comm = CommOf(job, rank);
    comm.records.erase(comm.records.begin(), comm.records.end());
  }
  for (ReplayFacts& r : CommOf(job, 2).replays) r.graph = 0x1234;  // rank 2 captured other ops
  const std::vector<Verdict> verdicts = Classify(job, kConfig, 200 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kMismatch);
  CHECK(v.seq == 2);
  CHECK(v.culprit_ranks == Ranks{2});
  CHECK(v.other_ranks == Ranks{0, 1});
  CHECK(v.graph == 0x1234);
  CHECK(v.summary ==
        "mismatch at capture on comm 0xc0ffee: the CUDA graphs captured from #2 differ: ranks 0-1 graph [AllReduce "
        "from #2 on comm 0xc0ffee] (key 0x9e3779b97f4a7c15) vs rank 2 graph [AllReduce from #2 on comm 0xc0ffee] (key "
        "0x1234)");
  CHECK(IncidentKeyOf(v).graph == 0);  // keyed by its #N, like every mismatch
}

TEST_CASE("a replay stuck behind an eager op: the eager op is the verdict, the replay a note", "[replays]") {
  JobFacts job = GraphJob(2, 2);
  const uint64_t at = 300 * kSec;
  for (int rank : {0, 1}) {
    Issue(CommOf(job, rank), 3, at);                 // eager #3, never completes
    Launch(CommOf(job, rank), 3, at + 5 * kSec);     // replay 3 launched after it
  }
  const std::vector<Verdict> verdicts = Classify(job, kConfig, at + 90 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kCollectiveHang);
  CHECK(v.seq == 3);
  CHECK(v.graph == 0);
  CHECK(Mentions(v, "replay 3 of graph [AllReduce from #2 on comm 0xc0ffee] waits behind #3 AllReduce: ranks 0-1 "
                    "launched the replay after issuing #3"));
}

TEST_CASE("an eager op stuck behind a hung replay: the replay is the verdict", "[replays]") {
  JobFacts job = GraphJob(2, 2);
  const uint64_t at = 300 * kSec;
  for (int rank : {0, 1}) {
    Launch(CommOf(job, rank), 3, at);   // replay 3 hangs
    Issue(CommOf(job, rank), 3, at + 5 * kSec);  // eager #3 issued after it, waits behind it
  }
  const std::vector<Verdict> verdicts = Classify(job, kConfig, at + 90 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kReplayHang);
  CHECK(v.seq == 3);
  CHECK(Mentions(v, "#3 AllReduce waits behind replay 3 of graph [AllReduce from #2 on comm 0xc0ffee]: ranks 0-1 "
                    "issued #3 after launching the replay"));
}

TEST_CASE("rank_exited while its peers wait in a replay it had not completed", "[replays]") {
  JobFacts job = GraphJob(2, 2);
  const uint64_t at = 300 * kSec;
  Launch(CommOf(job, 0), 3, at);
  Launch(CommOf(job, 1), 3, at);
  job.processes[1].alive = false;  // killed in its 3rd replay
  const std::vector<Verdict> verdicts = Classify(job, kConfig, at + 2 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kRankExited);
  CHECK(v.seq == 3);
  CHECK(v.graph == kGraph);
  CHECK(v.culprit_ranks == Ranks{1});
  CHECK(v.other_ranks == Ranks{0});
  CHECK(v.summary == "rank_exited on comm 0xc0ffee: rank 1 left while rank 0 waits in replay 3 of graph [AllReduce "
                     "from #2 on comm 0xc0ffee]");
  CHECK(IncidentKeyOf(v).graph == kGraph);
  // How it left, as a rank_exited in a collective says.
  CHECK(std::find(v.notes.begin(), v.notes.end(), "rank 1 died without recording an exit (killed or crashed) after #2") !=
        v.notes.end());
}

TEST_CASE("a pending replay is a wait: the oldest wait, and what a blocked host sync waits behind", "[replays]") {
  JobFacts job = GraphJob(1, 2);
  CommFacts& comm = CommOf(job, 0);
  Launch(comm, 3, 300 * kSec);
  const std::optional<Wait> wait = OldestPendingOp(comm);
  REQUIRE(wait);
  CHECK(wait->on == Wait::On::kReplay);
  CHECK(wait->replay->replay == 3);
  CHECK(wait->since_ns == 300 * kSec);
  SyncFacts sync;
  sync.blocked_since_ns = 301 * kSec;
  sync.target = SyncTarget::kStream;
  CHECK(PendingOpExplains(job.processes[0], sync));
  sync.blocked_since_ns = 299 * kSec;  // blocked before the launch: not its victim
  CHECK_FALSE(PendingOpExplains(job.processes[0], sync));
}

TEST_CASE("a graph label names the graph's ops in capture order, runs collapsed", "[replays]") {
  ReplayFacts r;
  r.first_seq = 7;
  r.ops = 10;
  r.op_names = {"AllReduce", "AllReduce", "Broadcast", "AllGather", "AllGather", "AllGather", "Send", "Recv"};
  CHECK(GraphLabel(r, 0xab) == "graph [AllReduce x2, Broadcast, AllGather x3, Send, Recv, 2 more from #7 on comm 0xab]");
  r = ReplayFacts{};
  r.ops = 2;
  r.op_names = {"Send", "Recv"};
  CHECK(GraphLabel(r, 0xab) == "graph [Send, Recv on comm 0xab]");
}

}  // namespace
}  // namespace ncclwatch::detect
