#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/analyze/analyzer.h"
#include "core/analyze/facts_from_dumps.h"
#include "core/analyze/report.h"
#include "core/analyze/thread_views.h"
#include "core/analyze/user_frames.h"
#include "core/detect/p2p_op.h"
#include "tests/core/analyze/crafted_job.h"

using namespace ncclwatch;
using testing::Comm;
using testing::Issue;
using testing::kTpComm;
using testing::kWorldComm;

namespace {

analyze::Analysis AnalyzeJob(const std::vector<dump::RankDump>& job) {
  dump::DumpSet set;
  for (size_t i = 0; i < job.size(); ++i) set.dumps.push_back(dump::LoadedDump{"d" + std::to_string(i), job[i]});
  return analyze::Analyze(set);
}

const analyze::Hint* FindHint(const analyze::Analysis& a, const std::string& id) {
  for (const auto& h : a.hints) {
    if (h.id == id) return &h;
  }
  return nullptr;
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

std::vector<std::string> FrameTexts(const analyze::ThreadStackView& thread) {
  std::vector<std::string> out;
  for (const auto& f : thread.frames) out.push_back(analyze::FrameText(f));
  return out;
}

using Ranks = std::vector<int>;

}  // namespace

TEST_CASE("a job where every collective completed has verdict none", "[analyze]") {
  analyze::Analysis a = AnalyzeJob(testing::HealthyJob(8, 20));
  CHECK(a.verdict.kind == detect::VerdictKind::kNone);
  CHECK(a.hints.empty());
  CHECK(a.dumps_read == 8);
  CHECK(a.missing_ranks.empty());
}

TEST_CASE("a rank that never joined #N is the straggler, with its data-loading frames as evidence", "[analyze]") {
  auto job = testing::HealthyJob(8, 0);
  for (auto& d : job) Issue(d, 10, 9);
  Issue(job[3], 9, 9);
  testing::AddPythonStack(job[3], {{"/app/train.py", 120, "restore_dataloader_state"}, {"/app/train.py", 10, "main"}});
  testing::AddBlockedMainThread(job[3], "read_shard");
  testing::AddBlockedMainThread(job[0], "ncclAllReduce");

  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kStraggler);
  CHECK(a.verdict.comm_hash == kWorldComm);
  CHECK(a.verdict.seq == 10);
  CHECK(a.verdict.op == "AllReduce");
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{3});
  CHECK(a.verdict.other_ranks == Ranks{0, 1, 2, 4, 5, 6, 7});
  REQUIRE(a.ranks.size() == 8);
  CHECK(a.ranks[3].state == "not joined #10");
  CHECK(a.ranks[3].last_joined == 9);
  CHECK(a.ranks[0].state == "waiting in #10");

  REQUIRE(a.stacks.size() == 1);
  CHECK(a.stacks[0].ranks == Ranks{3});
  REQUIRE(a.stacks[0].threads.size() == 2);
  // No native thread runs the interpreter here, so the Python thread stands alone, first.
  CHECK(a.stacks[0].threads[0].tids.empty());
  CHECK(analyze::FrameText(a.stacks[0].threads[0].frames.front()) == "restore_dataloader_state (/app/train.py:120)");
  // Native: the handler, the trampoline and the libc wait frames are hidden; the user frame
  // comes first; libc's start-up below main is hidden too.
  const auto& native = a.stacks[0].threads[1];
  CHECK(analyze::FrameText(native.frames.front()).rfind("read_shard (libtrain.so+0x", 0) == 0);
  CHECK(native.hidden_frames == 5);
  CHECK(AnyContains(FrameTexts(native), "main (python3+"));
  CHECK_FALSE(AnyContains(FrameTexts(native), "__libc_start_main"));

  const analyze::Hint* hint = FindHint(a, "data_loading");
  REQUIRE(hint);
  CHECK(AnyContains(hint->evidence, "rank 3 (node0:1003): restore_dataloader_state"));
  CHECK(hint->advice.find("restoring or skipping data") != std::string::npos);
  CHECK_FALSE(FindHint(a, "p2p_transport"));
}

TEST_CASE("a straggler without data-loading frames gets no data-loading hint", "[analyze]") {
  auto job = testing::HealthyJob(4, 0);
  for (auto& d : job) Issue(d, 10, 9);
  Issue(job[2], 9, 9);
  testing::AddBlockedMainThread(job[2], "compute_attention");
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kStraggler);
  CHECK_FALSE(FindHint(a, "data_loading"));
}

TEST_CASE("where the waiters issued the collective the straggler has not joined (NCCLWATCH_CALL_SITES)", "[analyze]") {
  auto job = testing::HealthyJob(4, 0);
  for (auto& d : job) Issue(d, 10, 9);
  Issue(job[2], 9, 9);
  for (auto& r : Comm(job[0]).records) {
    if (r.seq == 10) r.call_site = "/job/train.py:88 in step";
  }
  analyze::Analysis a = AnalyzeJob(job);
  REQUIRE(a.verdict.kind == detect::VerdictKind::kStraggler);
  REQUIRE(a.ranks.size() == 4);
  CHECK(a.ranks[0].state == "waiting in #10 issued at /job/train.py:88 in step");
  CHECK(a.ranks[1].state == "waiting in #10");  // its dump has no call site
  CHECK(a.ranks[2].state == "not joined #10");
}

TEST_CASE("every rank inside a collective that never completes is a collective hang", "[analyze]") {
  auto job = testing::HealthyJob(8, 0);
  for (auto& d : job) {
    Issue(d, 5, 4);
    d.environment.nvidia_driver = "545.23.08";
  }
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kCollectiveHang);
  CHECK(a.verdict.seq == 5);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{0, 1, 2, 3, 4, 5, 6, 7});
  // The classifier's sentence, as the live log prints it.
  CHECK(a.verdict.summary ==
        "collective_hang on comm 0xfeedface12345678: #5 AllReduce joined by all 8 ranks with a dump has not "
        "completed on ranks 0-7");
  const analyze::Hint* hint = FindHint(a, "p2p_transport");
  REQUIRE(hint);
  CHECK(hint->advice.find("NCCL_P2P_DISABLE=1") != std::string::npos);
  CHECK(hint->advice.find("NCCL_P2P_LEVEL=NVL") != std::string::npos);
  CHECK(hint->advice.find("NCCL_DEBUG=INFO") != std::string::npos);
  CHECK(AnyContains(hint->evidence, "driver 545.23.08 on node0 (545.x has reports"));
  // A variable nobody set is no evidence: the hint names only what a dump shows.
  CHECK_FALSE(AnyContains(hint->evidence, "NCCL_P2P_DISABLE"));
  CHECK_FALSE(AnyContains(hint->evidence, "unset"));
}

TEST_CASE("a Broadcast issued by one rank where the others AllReduce is a mismatch", "[analyze]") {
  auto job = testing::HealthyJob(4, 0);
  for (auto& d : job) Issue(d, 7, 6);
  auto& odd = Comm(job[2]).records[6];
  odd.op = "Broadcast";
  odd.redop = -1;
  odd.root = 0;
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kMismatch);
  CHECK(a.verdict.seq == 7);
  CHECK(a.verdict.op == "Broadcast");
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{2});
  CHECK(a.verdict.other_ranks == Ranks{0, 1, 3});
  auto row = std::find_if(a.fingerprints.begin(), a.fingerprints.end(), [](const auto& r) { return r.seq == 7; });
  REQUIRE(row != a.fingerprints.end());
  CHECK(row->differs);
  CHECK(row->cells.at(2).op == "Broadcast");
  CHECK(row->cells.at(1).op == "AllReduce");
  auto earlier = std::find_if(a.fingerprints.begin(), a.fingerprints.end(), [](const auto& r) { return r.seq == 6; });
  REQUIRE(earlier != a.fingerprints.end());
  CHECK_FALSE(earlier->differs);
  const analyze::Hint* hint = FindHint(a, "broadcast_divergence");
  REQUIRE(hint);
  CHECK(hint->advice.find("broadcast_buffers=False") != std::string::npos);
  CHECK(AnyContains(hint->evidence, "rank 2 issued Broadcast"));
}

TEST_CASE("different counts at the same collective are a mismatch without the broadcast hint", "[analyze]") {
  auto job = testing::HealthyJob(2, 0);
  for (auto& d : job) Issue(d, 3, 2);
  Comm(job[1]).records[2].count = 2048;
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kMismatch);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{0, 1});  // tie: no majority, every rank is named (as live)
  CHECK(FindHint(a, "collective_divergence"));
  CHECK_FALSE(FindHint(a, "broadcast_divergence"));
}

TEST_CASE("send and receive are never compared as a mismatch", "[analyze]") {
  auto job = testing::HealthyJob(2, 0);
  Issue(job[0], 3, 3, "Send");
  Issue(job[1], 3, 3, "Recv");
  CHECK(AnalyzeJob(job).verdict.kind == detect::VerdictKind::kNone);
}

TEST_CASE("one-sided ops (NCCL 2.29) are per peer like send and receive, never a mismatch", "[analyze]") {
  for (const char* op : {"Send", "Recv", "PutSignal", "Signal", "WaitSignal"}) CHECK(detect::IsPointToPoint(op));
  for (const char* op : {"AllReduce", "Broadcast", "AlltoAll", "Gather", "Scatter"}) {
    CHECK_FALSE(detect::IsPointToPoint(op));
  }
  auto job = testing::HealthyJob(3, 0);
  Issue(job[0], 3, 3, "PutSignal");
  Issue(job[1], 3, 3, "WaitSignal");
  Issue(job[2], 3, 3, "Signal");
  CHECK(AnalyzeJob(job).verdict.kind == detect::VerdictKind::kNone);
}

TEST_CASE("an init that never finishes is an init hang with the transport settings as evidence", "[analyze]") {
  auto job = testing::HealthyJob(4, 0);
  for (auto& d : job) {
    Comm(d).init_done_ns = 0;
    d.environment.nccl_env["NCCL_SOCKET_IFNAME"] = "eth0";
  }
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kInitHang);
  CHECK(a.verdict.op == "init");
  CHECK(a.verdict.seq == 0);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{0, 1, 2, 3});
  const analyze::Hint* hint = FindHint(a, "init_transport");
  REQUIRE(hint);
  CHECK(hint->advice.find("NCCL_SOCKET_IFNAME") != std::string::npos);
  CHECK(hint->advice.find("NCCL_IB_DISABLE") != std::string::npos);
  CHECK(AnyContains(hint->evidence, "NCCL_SOCKET_IFNAME=eth0 on node0"));
  CHECK_FALSE(AnyContains(hint->evidence, "NCCL_IB_DISABLE"));  // unset: no evidence
  CHECK_FALSE(AnyContains(hint->evidence, "unset"));
}

TEST_CASE("ranks that never reached init are blamed for an init hang", "[analyze]") {
  auto job = testing::HealthyJob(4, 0);
  job.pop_back();
  for (auto& d : job) Comm(d).init_done_ns = 0;
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kInitHang);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{3});
  CHECK(a.missing_ranks == Ranks{3});
}

TEST_CASE("ranks without a dump are listed, and blamed when every other rank waits", "[analyze]") {
  auto job = testing::HealthyJob(8, 0);
  for (auto& d : job) Issue(d, 10, 9);
  job.resize(6);
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.missing_ranks == Ranks{6, 7});
  CHECK(a.verdict.kind == detect::VerdictKind::kStraggler);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{6, 7});
  CHECK(a.ranks.at(7).state == "no dump");
  CHECK_FALSE(a.ranks.at(7).has_dump);
  CHECK(a.culprits_without_stacks == 2);
}

TEST_CASE("missing ranks are not blamed when a present rank is behind", "[analyze]") {
  auto job = testing::HealthyJob(8, 0);
  for (auto& d : job) Issue(d, 10, 9);
  Issue(job[1], 9, 9);
  job.pop_back();
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kStraggler);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{1});
  CHECK(a.missing_ranks == Ranks{7});
}

TEST_CASE("rank_exited comes from the exited rank's facts, in the dump its peer wrote for it", "[analyze]") {
  auto job = testing::HealthyJob(8, 0);
  for (auto& d : job) Issue(d, 10, 9);
  // Rank 5 exited after #9: its peer's watchdog wrote its dump from its segment.
  Issue(job[5], 9, 9);
  job[5].process.alive = false;
  job[5].process.exit.recorded = true;
  job[5].process.exit.status = 0;
  job[5].written_by.pid = job[0].process.pid;
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kRankExited);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{5});
  CHECK(a.verdict.other_ranks == Ranks{0, 1, 2, 3, 4, 6, 7});
  CHECK(a.verdict.seq == 10);
  CHECK(a.missing_ranks.empty());
  CHECK(AnyContains(a.notes, "rank 5 exited with status 0 after #9"));
}

// A DDP-like 2-rank job: two parameter broadcasts, then steps of [buffer Broadcast, 3 AllReduce].
// Rank 1 issued `exited_calls` calls and exited; rank 0 issued one more and waits in it.
std::vector<dump::RankDump> ExitedJob(uint64_t exited_calls) {
  auto job = testing::HealthyJob(2, 0);
  const auto call = [](uint64_t seq) {
    detect::RecordFacts r;
    r.seq = seq;
    const bool broadcast = seq <= 2 || (seq - 3) % 4 == 0;
    r.op = broadcast ? "Broadcast" : "AllReduce";
    r.count = seq <= 2 ? 4096 : broadcast ? 16 : 1024;
    r.datatype = 7;
    r.redop = broadcast ? -1 : 0;
    r.root = broadcast ? 0 : -1;
    r.enqueue_ns = 1'000'000 * seq;
    r.complete_ns = r.enqueue_ns + 1000;
    return r;
  };
  for (int rank = 0; rank < 2; ++rank) {
    detect::CommFacts& c = Comm(job[rank]);
    const uint64_t issued = rank == 0 ? exited_calls + 1 : exited_calls;
    for (uint64_t seq = 1; seq <= issued; ++seq) c.records.push_back(call(seq));
    if (rank == 0) c.records.back().complete_ns = 0;
    c.last_enqueued_seq = issued;
    c.last_completed_seq = exited_calls;
  }
  job[1].process.alive = false;
  job[1].process.exit.recorded = true;
  job[1].written_by.pid = job[0].process.pid;
  return job;
}

TEST_CASE("rank_exited hints tell a crash, uneven inputs and a one-sided collective apart", "[analyze][hints]") {
  SECTION("clean exit after whole steps, the survivor starts one more: uneven inputs") {
    analyze::Analysis a = AnalyzeJob(ExitedJob(2 + 3 * 4));
    CHECK(a.verdict.kind == detect::VerdictKind::kRankExited);
    CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{1});
    CHECK(a.verdict.op == "Broadcast");
    CHECK(FindHint(a, "uneven_inputs"));
    CHECK_FALSE(FindHint(a, "crash"));
    CHECK_FALSE(FindHint(a, "partial_collective"));
  }
  SECTION("clean exit inside a step (an extra forward's Broadcast), the survivor goes on: partial collective") {
    analyze::Analysis a = AnalyzeJob(ExitedJob(2 + 3 * 4 + 1));
    CHECK(a.verdict.kind == detect::VerdictKind::kRankExited);
    CHECK(a.verdict.op == "AllReduce");
    CHECK(FindHint(a, "partial_collective"));
    CHECK_FALSE(FindHint(a, "uneven_inputs"));
  }
  SECTION("no exit recorded: killed or crashed") {
    auto job = ExitedJob(2 + 3 * 4);
    job[1].process.exit.recorded = false;
    analyze::Analysis a = AnalyzeJob(job);
    const analyze::Hint* hint = FindHint(a, "crash");
    REQUIRE(hint);
    CHECK(AnyContains(hint->evidence, "died without recording an exit"));
    CHECK_FALSE(FindHint(a, "uneven_inputs"));
  }
  SECTION("a non-zero exit status is a crash too") {
    auto job = ExitedJob(2 + 3 * 4);
    job[1].process.exit.status = 1;
    analyze::Analysis a = AnalyzeJob(job);
    const analyze::Hint* hint = FindHint(a, "crash");
    REQUIRE(hint);
    CHECK(AnyContains(hint->evidence, "exited with status 1"));
  }
}

TEST_CASE("a rank that left the communicator while its process runs is rank_exited", "[analyze]") {
  auto job = testing::HealthyJob(4, 0);
  for (auto& d : job) Issue(d, 10, 9);
  Issue(job[2], 9, 9);
  job[2].comms[0].lifecycle = detect::CommLifecycle::kDestroyed;
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kRankExited);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{2});
  CHECK(AnyContains(a.notes, "rank 2 left the communicator"));
}

TEST_CASE("without the exited rank's dump, the rank with no dump is the straggler", "[analyze]") {
  auto job = testing::HealthyJob(8, 0);
  for (auto& d : job) Issue(d, 10, 9);
  job.erase(job.begin() + 5);
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kStraggler);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{5});
  CHECK(a.verdict.seq == 10);
  CHECK(a.missing_ranks == Ranks{5});
}

TEST_CASE("sync_stuck is adopted when no communicator is stuck", "[analyze]") {
  auto job = testing::HealthyJob(4, 6);
  job[1].verdict.kind = detect::VerdictKind::kSyncStuck;
  job[1].verdict.op = "stream";
  job[1].host_syncs.push_back(detect::SyncFacts{5, detect::SyncTarget::kStream, 0x7f00, 1001});
  testing::AddBlockedMainThread(job[1], "cudaStreamSynchronize");
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kSyncStuck);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{1});
  REQUIRE(a.stacks.size() == 1);
  CHECK(analyze::ThreadHeader(a.stacks[0].threads.at(0)).find("blocked in cudaStreamSynchronize") != std::string::npos);
}

// Issue 20: every block is a human duration, as the rank saw it when it dumped (the dump's
// detection time is on the sync's own host clock; the reader's clock means nothing).
TEST_CASE("offline, a blocked sync is described with its duration at the dump's detection", "[analyze]") {
  constexpr uint64_t kBlockedNs = 5'300'000'000ull;
  SECTION("sync_stuck: the summary") {
    auto job = testing::HealthyJob(4, 6);
    job[1].verdict.kind = detect::VerdictKind::kSyncStuck;
    job[1].host_syncs.push_back(
        detect::SyncFacts{job[1].incident.detected_mono_ns - kBlockedNs, detect::SyncTarget::kStream, 0x7f00, 1001});
    analyze::Analysis a = AnalyzeJob(job);
    REQUIRE(a.verdict.kind == detect::VerdictKind::kSyncStuck);
    CHECK(a.verdict.summary.find("rank 1 blocked in cudaStreamSynchronize (stream 0x7f00) for 5.3s") !=
          std::string::npos);
  }
  SECTION("a straggler's note on a host thread blocked behind the collective, on another host's clock") {
    auto job = testing::HealthyJob(8, 0, 4);  // two hosts, clocks 1000 s apart
    for (auto& d : job) Issue(d, 10, 9);
    Issue(job[3], 9, 9);
    job[6].host_syncs.push_back(
        detect::SyncFacts{job[6].incident.detected_mono_ns - kBlockedNs, detect::SyncTarget::kStream, 0, 1006});
    analyze::Analysis a = AnalyzeJob(job);
    REQUIRE(a.verdict.kind == detect::VerdictKind::kStraggler);
    CHECK(AnyContains(a.notes, "rank 6 blocked in cudaStreamSynchronize (default stream) for 5.3s"));
  }
  SECTION("a gone rank's sync lasted until its exit") {
    auto job = testing::HealthyJob(4, 0);
    for (auto& d : job) Issue(d, 10, 9);
    Issue(job[2], 9, 9);
    job[2].process.alive = false;
    job[2].process.exit.recorded = false;
    job[2].process.exit.exit_ns = job[2].incident.detected_mono_ns - 10'000'000'000ull;
    job[2].host_syncs.push_back(detect::SyncFacts{job[2].process.exit.exit_ns - 2'000'000'000ull,
                                                  detect::SyncTarget::kDevice, 0, 1002});
    analyze::Analysis a = AnalyzeJob(job);
    CHECK(AnyContains(a.notes, "rank 2 blocked in cudaDeviceSynchronize (device 0) for 2.0s until it exited"));
  }
  SECTION("a sync through the driver API is named as the driver's call") {
    auto job = testing::HealthyJob(4, 0);
    for (auto& d : job) Issue(d, 10, 9);
    job[3].host_syncs.push_back(detect::SyncFacts{job[3].incident.detected_mono_ns - kBlockedNs,
                                                  detect::SyncTarget::kEvent, 0x7e00, 1003, 0, detect::SyncApi::kDriver});
    analyze::Analysis a = AnalyzeJob(job);
    CHECK(AnyContains(a.notes, "rank 3 blocked in cuEventSynchronize (event 0x7e00) for 5.3s"));
  }
}

TEST_CASE("across hosts whose clocks disagree, ranks are aligned by collective number", "[analyze]") {
  auto job = testing::HealthyJob(16, 0, 4);  // 4 hosts, 4 ranks each, clocks far apart
  for (auto& d : job) Issue(d, 30, 29);
  Issue(job[13], 29, 29);
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.hosts == std::vector<std::string>{"node0", "node1", "node2", "node3"});
  CHECK(a.verdict.kind == detect::VerdictKind::kStraggler);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{13});
  REQUIRE(a.stacks.size() == 1);  // rank 13 has no threads captured: an empty group says so
  CHECK(a.stacks[0].ranks == Ranks{13});
  CHECK(a.stacks[0].threads.empty());
}

TEST_CASE("a mismatch outranks a straggler on another communicator", "[analyze]") {
  auto job = testing::HealthyJob(4, 0);
  for (auto& d : job) {
    Issue(d, 10, 9);
    detect::CommFacts tp = Comm(d);
    // Two tp groups, ranks 0-1 and 2-3: two communicators, two hashes.
    tp.comm_hash = d.process.global_rank < 2 ? kTpComm + 1 : kTpComm;
    tp.nranks = 2;
    tp.rank = d.process.global_rank % 2;
    d.comms.push_back(tp);
  }
  Issue(job[0], 9, 9);  // world: straggler
  Issue(job[3], Comm(job[3], kTpComm), 4, 3, "AllGather");  // tp of ranks 2,3: mismatch at #1
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kMismatch);
  CHECK(a.verdict.comm_hash == kTpComm);
  CHECK(AnyContains(a.notes, "straggler"));
  // Two ranks disagree: no majority, both are named, as the live detector does. Communicator
  // ranks 0-1 of the second tp group are global ranks 2-3: the text names both.
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{0, 1});
  CHECK(analyze::RenderTextReport(a).find("culprits: ranks 0-1 of the communicator = global ranks 2-3") !=
        std::string::npos);
}

TEST_CASE("a process's first unresolved incident counts; its later dumps are told after it", "[analyze]") {
  auto job = testing::HealthyJob(2, 0);
  for (auto& d : job) Issue(d, 10, 9);  // an incident no resolution note closed...
  auto later = testing::HealthyJob(2, 12);  // ...then later dumps of the same processes
  for (auto& d : later) {
    d.incident.id = "inc2";
    d.incident.detected_unix_ns += 1000;
    job.push_back(d);
  }
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kCollectiveHang);
  CHECK(a.verdict.seq == 10);
  CHECK(a.dumps_read == 2);
  CHECK(a.dumps_after == 2);
  CHECK(a.outcome == analyze::Outcome::kHang);
}

TEST_CASE("an old kernel is flagged next to any verdict", "[analyze]") {
  auto job = testing::HealthyJob(2, 0);
  for (auto& d : job) Issue(d, 3, 2);
  job[1].environment.kernel_release = "5.4.0-150-generic";
  analyze::Analysis a = AnalyzeJob(job);
  const analyze::Hint* hint = FindHint(a, "old_kernel");
  REQUIRE(hint);
  CHECK(hint->evidence == std::vector<std::string>{"kernel 5.4.0-150-generic on node0"});
}

TEST_CASE("the JSON report carries the documented verdict keys", "[analyze][report]") {
  auto job = testing::HealthyJob(4, 0);
  for (auto& d : job) Issue(d, 10, 9);
  Issue(job[2], 8, 8);
  nlohmann::json report = analyze::RenderJsonReport(AnalyzeJob(job));
  CHECK(report["schema"] == "ncclwatch.analysis");
  CHECK(report["version"] == 4);
  CHECK(report["verdict"]["kind"] == "straggler");
  // Version 2: names next to the numbers, ages at each rank's dump (crafted_job.h's clock:
  // detection at base + 100 s, #s enqueued at base + 10 ms + s ms + rank us, completed 0.5 ms later).
  CHECK(report["ranks"][0]["async_error_name"] == "ncclSuccess");
  CHECK(report["ranks"][0]["waiting_ns"] == 100'000'000'000 - 20'000'000);
  CHECK(report["ranks"][2]["waiting_ns"].is_null());
  CHECK(report["ranks"][2]["last_progress_ns"] == 100'000'000'000 - 18'500'000);
  CHECK(report["verdict"]["comm"] == "0xfeedface12345678");
  CHECK(report["verdict"]["seq"] == 10);
  CHECK(report["verdict"]["op"] == "AllReduce");
  // Version 3: the culprits under the name they have everywhere; `ranks` is every rank's state.
  CHECK(report["verdict"]["culprit_ranks"] == nlohmann::json::array({2}));
  CHECK_FALSE(report["verdict"].contains("ranks"));
  CHECK(report["ranks"].size() == 4);
  CHECK(report["ranks"][2]["last_joined"] == 8);
}

TEST_CASE("the stuck collective is shown with the framework's sequence number", "[analyze][report]") {
  auto job = testing::HealthyJob(4, 0);
  for (auto& d : job) Issue(d, 10, 9);
  Issue(job[2], 8, 8);
  // As on DDP: torch's start-up all_gather of a list is #1 and #2 (one group), one framework seq.
  for (auto& d : job) {
    for (detect::RecordFacts& r : Comm(d).records) r.framework_seq = r.seq == 1 ? 1 : r.seq - 1;
  }
  const analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.seq == 10);
  CHECK(a.verdict.framework_seq == 9);
  const std::string text = analyze::RenderTextReport(a);
  CHECK(text.find("collective #10 AllReduce (framework seq 9)\n") != std::string::npos);
  CHECK(analyze::RenderJsonReport(a)["verdict"]["framework_seq"] == 9);

  // Dumps of an ncclwatch without it: null in JSON, nothing in the text.
  for (auto& d : job) {
    for (detect::RecordFacts& r : Comm(d).records) r.framework_seq = 0;
  }
  const analyze::Analysis old = AnalyzeJob(job);
  CHECK(analyze::RenderJsonReport(old)["verdict"]["framework_seq"].is_null());
  CHECK(analyze::RenderTextReport(old).find("framework seq") == std::string::npos);
}

TEST_CASE("the text report groups thousands of ranks into a few lines", "[analyze][report]") {
  auto job = testing::HealthyJob(1024, 0);
  for (auto& d : job) Issue(d, 3, 2);
  Issue(job[700], 2, 2);
  std::string text = analyze::RenderTextReport(AnalyzeJob(job));
  CHECK(text.find("VERDICT: straggler") != std::string::npos);
  CHECK(text.find("rank 700: joined #2, completed #2, not joined #3") != std::string::npos);
  CHECK(text.find("ranks 0-699,701-1023: joined #3, completed #2, waiting in #3") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') < 40);
}

TEST_CASE("a process holding several ranks of one communicator counts each rank", "[analyze]") {
  // ncclCommInitAll style: one process drives ranks 0-3, another ranks 4-7.
  auto job = testing::HealthyJob(8, 0);
  for (auto& d : job) Issue(d, 6, 5);
  Issue(job[6], 5, 5);
  std::vector<dump::RankDump> processes(2);
  for (int p = 0; p < 2; ++p) {
    processes[p] = job[p * 4];
    processes[p].comms.clear();
    for (int r = p * 4; r < p * 4 + 4; ++r) processes[p].comms.push_back(Comm(job[r]));
  }
  analyze::Analysis a = AnalyzeJob(processes);
  CHECK(a.dumps_read == 2);
  CHECK(a.missing_ranks.empty());
  CHECK(a.verdict.kind == detect::VerdictKind::kStraggler);
  CHECK(detect::AllCulpritRanks(a.verdict) == Ranks{6});
  REQUIRE(a.ranks.size() == 8);
  CHECK(a.ranks[6].pid == 1004);
}

TEST_CASE("data loading is recognised by words, not substrings", "[analyze][hints]") {
  for (const char* text : {"LoadBatch", "(anonymous namespace)::SkipSamplesToResumePosition() (ddp_loop+0x8a0d)",
                           "restore_dataloader_state (/app/train.py:120)",
                           "__next__ (/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:633)",
                           "read_next_batch", "RestoreDataLoaderState"}) {
    INFO(text);
    CHECK(analyze::LooksLikeDataLoading(text));
  }
  for (const char* text : {"ncclwatch::preload::Tracker::Run() (libncclwatch.so+0x4d00e)", "download_weights",
                           "compute_attention", "OverloadedOperator", "payload_size"}) {
    INFO(text);
    CHECK_FALSE(analyze::LooksLikeDataLoading(text));
  }
}

TEST_CASE("ncclwatch's own threads and frames are neither shown nor taken as evidence", "[analyze][hints]") {
  auto job = testing::HealthyJob(4, 0);
  for (auto& d : job) Issue(d, 10, 9);
  Issue(job[2], 9, 9);
  testing::AddBlockedMainThread(job[2], "compute_attention");
  dump::NativeThread watchdog;
  watchdog.tid = job[2].process.pid + 1;
  watchdog.name = "ncclwatch-wd";
  watchdog.state = "R";
  watchdog.answered = true;
  watchdog.frames = {testing::Frame("ncclwatch::preload::Watchdog::Run()", "/build/lib/libncclwatch.so"),
                     testing::Frame("start_thread", "/lib/x86_64-linux-gnu/libc.so.6")};
  job[2].threads.push_back(watchdog);
  analyze::Analysis a = AnalyzeJob(job);
  CHECK(a.verdict.kind == detect::VerdictKind::kStraggler);
  CHECK_FALSE(FindHint(a, "data_loading"));
  REQUIRE(a.stacks.size() == 1);
  for (const auto& thread : a.stacks[0].threads) {
    INFO(analyze::ThreadHeader(thread));
    CHECK_FALSE(AnyContains(FrameTexts(thread), "libncclwatch.so"));
  }
}
