#include "core/watch/dump_builder.h"

#include <catch2/catch.hpp>

#include "tests/core/dump/read_back.h"
#include "tests/core/dump/temp_dir.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"
#include "core/watch/facts_from_snapshot.h"
#include "snapshot_builder.h"

namespace ncclwatch::watch {
namespace {

using testing::Process;
using testing::ReadyComm;

detect::Verdict StragglerVerdict() {
  detect::Verdict v;
  v.kind = detect::VerdictKind::kStraggler;
  v.comm_hash = 0xfeed;
  v.seq = 3;
  v.op = "AllReduce";
  v.culprit_ranks = {2};
  v.other_ranks = {0, 1};
  v.since_ns = 3'000'000'000ull;
  v.summary = "rank 2 has not joined #3";
  v.partial = false;
  return v;
}

TEST_CASE("a dump keeps the detector's verdict: the subset its file holds, the rest reads back empty", "[builder]") {
  detect::Verdict full = StragglerVerdict();
  full.comm_name = "world";
  full.nranks = 4;
  full.rank_evidence.resize(3);
  full.notes = {"a note"};
  dump::RankDump d;
  d.incident.id = "straggler-0xfeed-3";
  d.process.host = "hostA";
  d.process.pid = 321;
  d.verdict = full;
  testing::TempDir dir;
  const Result<dump::DumpFiles> written = dump::WriteDump(d, dir.path());
  REQUIRE(written.ok());
  const dump::RankDump back = testing::ReadBack(written->json_path);
  const detect::Verdict& v = back.verdict;
  CHECK(v.kind == detect::VerdictKind::kStraggler);
  CHECK(v.comm_hash == 0xfeed);
  CHECK(v.seq == 3);
  CHECK(v.op == "AllReduce");
  CHECK(v.culprit_ranks == std::vector<int>{2});
  CHECK(v.other_ranks == std::vector<int>{0, 1});
  CHECK(v.since_ns == 3'000'000'000ull);
  CHECK(v.summary == full.summary);
  CHECK(v.comm_name.empty());
  CHECK(v.nranks == 0);
  CHECK(v.rank_evidence.empty());
  CHECK(v.notes.empty());
}

TEST_CASE("a verdict from a trigger file names who asked", "[builder]") {
  Trigger t;
  t.incident_id = "x";
  t.verdict.kind = detect::VerdictKind::kCollectiveHang;
  t.verdict.comm_hash = 0xabc;
  t.verdict.seq = 9;
  t.verdict.op = "Broadcast";
  t.host = "node3";
  t.pid = 77;
  t.verdict.culprit_ranks = {3};
  t.verdict.partial = true;
  const detect::Verdict v = VerdictOfTrigger(t);
  CHECK(v.kind == detect::VerdictKind::kCollectiveHang);
  CHECK(v.seq == 9);
  CHECK(v.culprit_ranks == std::vector<int>{3});
  CHECK(v.partial);
  CHECK(v.summary.find("node3:77") != std::string::npos);
  t.verdict.kind = detect::VerdictKind::kUnknown;  // read from a file with a kind this version does not know
  CHECK(VerdictOfTrigger(t).kind == detect::VerdictKind::kNone);
}

TEST_CASE("published state fills ranks, device, comms, last records and host syncs", "[builder]") {
  shm::ProcessView self = Process(321, 2);
  self.comms.push_back(ReadyComm(0xfeed, 2, 4, 100, 99));
  shm::CommView initializing = ReadyComm(0xbeef, 0, 2, 0, 0);
  initializing.state = shm::CommState::kInitializing;
  self.comms.push_back(initializing);
  shm::SyncView sync;
  sync.tid = 999;
  sync.kind = shm::SyncKind::kStream;
  sync.target = 0x55;
  sync.blocked_since_ns = 1234;
  self.sync_slots.push_back(sync);

  dump::RankDump d;
  AddPublishedState(ProcessFactsFromSnapshot(self, 16), &d);
  CHECK(d.process.global_rank == 2);
  CHECK(d.process.world_size == 4);
  CHECK(d.process.device == 2);
  REQUIRE(d.comms.size() == 2);
  CHECK(d.comms[0].comm_hash == 0xfeed);
  CHECK(d.comms[0].last_enqueued_seq == 100);
  CHECK(d.comms[0].last_completed_seq == 99);
  REQUIRE(d.comms[0].records.size() == 16);
  CHECK(d.comms[0].records.front().seq == 85);
  CHECK(d.comms[0].records.back().seq == 100);
  CHECK(d.comms[0].records.back().complete_ns == 0);
  CHECK(d.comms[1].init_done_ns == 0);
  REQUIRE(d.host_syncs.size() == 1);
  CHECK(d.host_syncs[0].tid == 999);
  CHECK(d.host_syncs[0].target == detect::SyncTarget::kStream);
  CHECK(d.host_syncs[0].handle == 0x55);
}

TEST_CASE("stacks are copied; a non-Python process says why it has no Python stacks", "[builder]") {
  ProcessStacks stacks;
  ThreadStack t;
  t.tid = 7;
  t.name = "main";
  t.state = 'S';
  t.answered = true;
  t.frames.push_back(Frame{0x1000, "SkipSamplesToResumePosition(double)", "/bin/x", 0x10, false});
  ThreadStack deaf;
  deaf.tid = 8;
  deaf.answered = false;
  stacks.threads = {t, deaf};
  stacks.errors = {"thread 8 did not answer"};
  dump::RankDump d;
  AddStacks(stacks, &d);
  REQUIRE(d.threads.size() == 2);
  CHECK(d.threads[0].state == "S");
  CHECK(d.threads[0].frames[0].function == "SkipSamplesToResumePosition(double)");
  CHECK_FALSE(d.threads[1].answered);
  CHECK(d.stack_errors.size() == 1);
  CHECK_FALSE(d.python.available);
  CHECK(d.python.reason == "not a Python process");
}

TEST_CASE("Python stacks are copied when the capture found them", "[builder]") {
  ProcessStacks stacks;
  stacks.is_python = true;
  PythonThread t;
  t.thread_id = 140;
  t.current = true;
  t.frames.push_back(PythonFrame{"train.py", 12, "restore_data_loader_state"});
  stacks.python = {t};
  dump::RankDump d;
  AddStacks(stacks, &d);
  CHECK(d.python.available);
  REQUIRE(d.python.threads.size() == 1);
  CHECK(d.python.threads[0].frames[0].function == "restore_data_loader_state");
}

TEST_CASE("a built dump is a valid dump for the reader", "[builder]") {
  shm::ProcessView self = Process(321, 1);
  self.comms.push_back(ReadyComm(0xfeed, 1, 4, 5, 4));
  dump::RankDump d;
  d.incident.id = "straggler-0xfeed-3";
  d.incident.trigger = "local";
  d.verdict = StragglerVerdict();
  d.process.host = "hostA";
  d.process.pid = 321;
  AddPublishedState(ProcessFactsFromSnapshot(self, 64), &d);
  testing::TempDir dir;
  const Result<dump::DumpFiles> written = dump::WriteDump(d, dir.path());
  REQUIRE(written.ok());
  const dump::RankDump back = testing::ReadBack(written->json_path);
  CHECK(back.verdict.kind == detect::VerdictKind::kStraggler);
  CHECK(back.verdict.culprit_ranks == std::vector<int>{2});
  CHECK(back.comms.size() == 1);
  CHECK(back.comms[0].records.size() == 5);
}

TEST_CASE("gone processes sharing a communicator get a dump on their behalf; others do not", "[builder]") {
  shm::JobSnapshot snap;
  shm::ProcessView self = Process(100, 0);
  self.comms.push_back(ReadyComm(0xfeed, 0, 4, 5, 4));
  shm::ProcessView live = Process(101, 1);
  live.comms.push_back(ReadyComm(0xfeed, 1, 4, 5, 4));
  shm::ProcessView exited = Process(102, 2, /*alive=*/true);  // pid still finishing its exit
  exited.exited = true;
  exited.exit_how = shm::ExitHow::kStatus;
  exited.exit_status = 0;
  exited.exit_ns = 4'000'000'000ull;
  shm::CommView left = ReadyComm(0xfeed, 2, 4, 4, 4);
  left.state = shm::CommState::kDestroyed;
  left.untracked_ops = 1;
  exited.comms.push_back(left);
  shm::ProcessView killed = Process(103, 3, /*alive=*/false);
  killed.comms.push_back(ReadyComm(0xfeed, 3, 4, 5, 4));
  shm::ProcessView earlier_attempt = Process(104, 1, /*alive=*/false);  // same job id, old communicator
  earlier_attempt.comms.push_back(ReadyComm(0xbeef, 1, 4, 9, 9));
  snap.processes = {self, live, exited, killed, earlier_attempt};

  dump::RankDump own;
  own.incident.id = "rank_exited-0xfeed-5";
  own.verdict.kind = detect::VerdictKind::kRankExited;
  own.verdict.culprit_ranks = {2, 3};
  own.process.host = "hostA";
  own.process.pid = 100;
  own.process.global_rank = 0;
  AddPublishedState(ProcessFactsFromSnapshot(self, 64), &own);
  const std::vector<dump::RankDump> gone = DumpsOnBehalf(FactsFromSnapshot(snap), own);
  REQUIRE(gone.size() == 2);
  const dump::RankDump& e = gone[0];
  CHECK(e.process.pid == 102);
  CHECK(e.process.global_rank == 2);
  CHECK_FALSE(e.process.alive);
  CHECK(e.process.exit.recorded);
  CHECK(e.process.exit.status == 0);
  CHECK(e.process.exit.exit_ns == 4'000'000'000ull);
  REQUIRE(e.comms.size() == 1);
  CHECK(e.comms[0].left());
  CHECK(e.comms[0].untracked_ops == 1);
  CHECK(e.comms[0].last_completed_seq == 4);
  CHECK(e.comms[0].records.size() == 4);
  CHECK(e.incident.id == own.incident.id);
  CHECK(e.verdict.kind == detect::VerdictKind::kRankExited);
  CHECK(e.written_by.pid == 100);
  CHECK(e.written_by.global_rank == 0);
  CHECK(e.threads.empty());
  CHECK_FALSE(e.python.available);
  const dump::RankDump& k = gone[1];
  CHECK(k.process.pid == 103);
  CHECK_FALSE(k.process.alive);
  CHECK_FALSE(k.process.exit.recorded);  // SIGKILL: no word
  CHECK_FALSE(k.comms.at(0).left());

  testing::TempDir dir;  // the file is the gone process's, not the writer's
  const Result<dump::DumpFiles> written = dump::WriteDump(e, dir.path());
  REQUIRE(written.ok());
  CHECK(written->json_path == dir.File("rank2-hostA-102-rank_exited-0xfeed-5.json"));
}

}  // namespace
}  // namespace ncclwatch::watch

namespace ncclwatch::watch {
namespace {

// One model: what the dump keeps of a process is exactly what the live detector judged.
TEST_CASE("the dump's communicators and host syncs are the process's facts", "[builder]") {
  shm::ProcessView self = Process(321, 0);
  shm::CommView ready = ReadyComm(0xfeed, 0, 2, 3, 2);
  shm::RecordView send = testing::Record(1, shm::Op::kSend, 3'500'000'000ull);
  send.root_or_peer = 1;
  ready.records.push_back(send);
  shm::CommView suspended = ReadyComm(0x5b5, 0, 2, 1, 1);
  suspended.state = shm::CommState::kSuspended;
  shm::CommView failed = ReadyComm(0xfa1, 0, 2, 0, 0);
  failed.state = shm::CommState::kInitFailed;
  self.comms = {ready, suspended, failed};
  shm::SyncView device_sync;
  device_sync.tid = 7;
  device_sync.kind = shm::SyncKind::kDevice;
  device_sync.device = -1;  // unknown device
  device_sync.blocked_since_ns = 99;
  self.sync_slots.push_back(device_sync);

  const detect::ProcessFacts facts = ProcessFactsFromSnapshot(self, kRecordsPerCommInView);
  dump::RankDump d;
  AddPublishedState(ProcessFactsFromSnapshot(self, kRecordsPerCommInView), &d);
  // The suspended communicator and the failed init are evidence, with their lifecycle; the
  // rules do not judge them (CommFacts::judged).
  REQUIRE(d.comms.size() == 3);
  REQUIRE(facts.comms.size() == 3);
  CHECK(d.comms[1].lifecycle == detect::CommLifecycle::kSuspended);
  CHECK(d.comms[2].lifecycle == detect::CommLifecycle::kInitFailed);
  CHECK_FALSE(d.comms[1].judged());
  CHECK_FALSE(d.comms[2].judged());
  CHECK(d.comms[0].comm_hash == 0xfeed);
  CHECK(d.comms[0].records.size() == 3);
  REQUIRE(d.comms[0].p2p_records.size() == 1);  // the Send, apart from the collectives, with its peer
  CHECK(d.comms[0].p2p_records[0].peer == 1);
  CHECK(d.comms[0].p2p_records[0].peer == facts.comms[0].p2p_records[0].peer);
  REQUIRE(d.host_syncs.size() == 1);
  CHECK(d.host_syncs[0].tid == 7);
  CHECK(d.host_syncs[0].handle == 0);  // clamped, live and in the dump alike
  REQUIRE(facts.syncs.size() == 1);
  CHECK(facts.syncs[0].handle == d.host_syncs[0].handle);
}

}  // namespace
}  // namespace ncclwatch::watch
