#include "core/shm/record_flags.h"
#include "core/watch/facts_from_snapshot.h"

#include <catch2/catch.hpp>

#include "core/detect/detector.h"
#include "snapshot_builder.h"

namespace ncclwatch::watch {
namespace {

using testing::Process;
using testing::ReadyComm;
using testing::Record;

TEST_CASE("ops get canonical names; redop and root are -1 when the op has none", "[adapter]") {
  shm::CommView c = ReadyComm(0xabc, 0, 2, 0, 0);
  shm::RecordView bcast = Record(1, shm::Op::kBroadcast, 10);
  bcast.root_or_peer = 1;
  shm::RecordView gather = Record(2, shm::Op::kAllGather, 20);
  gather.redop = 0;
  shm::RecordView reduce = Record(3, shm::Op::kReduce, 30);
  reduce.redop = 2;
  reduce.root_or_peer = 0;
  c.records = {bcast, gather, reduce};
  const detect::CommFacts v = CommFactsFromSnapshot(c);
  REQUIRE(v.records.size() == 3);
  CHECK(v.records[0].op == "Broadcast");
  CHECK(v.records[0].root == 1);
  CHECK(v.records[0].redop == -1);
  CHECK(v.records[1].op == "AllGather");
  CHECK(v.records[1].redop == -1);
  CHECK(v.records[1].root == -1);
  CHECK(v.records[2].redop == 2);
  CHECK(v.records[2].root == 0);
}

TEST_CASE("P2P records are not collectives and are left out", "[adapter]") {
  shm::CommView c = ReadyComm(0xabc, 0, 2, 1, 1);
  shm::RecordView send = Record(1, shm::Op::kSend, 5);
  send.root_or_peer = 1;
  c.records.push_back(send);
  const detect::CommFacts v = CommFactsFromSnapshot(c);
  REQUIRE(v.records.size() == 1);
  CHECK(v.records[0].op == "AllReduce");
}

TEST_CASE("only the newest records are kept", "[adapter]") {
  const shm::CommView c = ReadyComm(0xabc, 0, 2, 100, 100);
  const detect::CommFacts v = CommFactsFromSnapshot(c, 8);
  REQUIRE(v.records.size() == 8);
  CHECK(v.records.front().seq == 93);
  CHECK(v.records.back().seq == 100);
}

TEST_CASE("a collective that can never be seen complete does not hold completion back", "[adapter]") {
  shm::CommView c = ReadyComm(0xabc, 0, 2, 3, 2);
  c.records[2].flags = shm::kRecordCaptured;
  CHECK(CommFactsFromSnapshot(c).last_completed_seq == 3);
  c.records[2].flags = 0;
  CHECK(CommFactsFromSnapshot(c).last_completed_seq == 2);
}

TEST_CASE("a completion seen in the records counts even when the counter lags", "[adapter]") {
  shm::CommView c = ReadyComm(0xabc, 0, 2, 3, 3);
  c.last_completed_seq = 1;
  CHECK(CommFactsFromSnapshot(c).last_completed_seq == 3);
}

TEST_CASE("init in progress has no init_done time", "[adapter]") {
  shm::CommView c = ReadyComm(0xabc, 0, 2, 0, 0);
  c.state = shm::CommState::kInitializing;
  CHECK(CommFactsFromSnapshot(c).init_done_ns == 0);
  CHECK(CommFactsFromSnapshot(c).init_started_ns == 100);
}

TEST_CASE("split and shrink children are derived, root communicators are not", "[adapter]") {
  shm::CommView c = ReadyComm(0xabc, 0, 2, 0, 0);
  CHECK_FALSE(CommFactsFromSnapshot(c).derived);
  c.flags |= shm::kCommFromSplit;
  CHECK(CommFactsFromSnapshot(c).derived);
  c.flags = shm::kCommHashKnown | shm::kCommFromShrink;
  CHECK(CommFactsFromSnapshot(c).derived);
}

TEST_CASE("a process's launcher attempt is carried into its facts", "[adapter]") {
  shm::ProcessView p = Process(100, 0);
  CHECK_FALSE(ProcessFactsFromSnapshot(p).attempt.known());
  p.restart_count = 1;
  p.requeue_count = 3;
  CHECK(ProcessFactsFromSnapshot(p).attempt == detect::Attempt{1, 3});
}

TEST_CASE("dead processes stay in the view; closed ones go; comms a rank left stay as left", "[adapter]") {
  shm::JobSnapshot snap;
  shm::ProcessView dead = Process(11, 0, /*alive=*/false);
  dead.comms.push_back(ReadyComm(0xabc, 0, 2, 1, 0));
  shm::ProcessView closed = Process(12, 1);
  closed.closed = true;
  shm::ProcessView live = Process(13, 2);
  shm::CommView destroyed = ReadyComm(0xdef, 0, 2, 1, 1);
  destroyed.state = shm::CommState::kDestroyed;
  shm::CommView suspended = ReadyComm(0x5b5, 0, 2, 1, 1);
  suspended.state = shm::CommState::kSuspended;
  shm::CommView failed = ReadyComm(0xfa1, 0, 2, 0, 0);
  failed.state = shm::CommState::kInitFailed;
  live.comms = {destroyed, suspended, failed, ReadyComm(0xabc, 1, 2, 1, 0)};
  snap.processes = {dead, closed, live};
  const detect::JobFacts v = FactsFromSnapshot(snap);
  REQUIRE(v.processes.size() == 2);
  CHECK(v.processes[0].pid == 11);
  CHECK_FALSE(v.processes[0].alive);
  CHECK_FALSE(v.processes[0].exit.recorded);  // killed without a word: a crash
  CHECK(v.processes[0].comms.size() == 1);
  CHECK(v.processes[1].pid == 13);
  REQUIRE(v.processes[1].comms.size() == 4);  // suspended and failed ones as evidence
  CHECK(v.processes[1].comms[0].comm_hash == 0xdef);
  CHECK(v.processes[1].comms[0].left());
  CHECK(v.processes[1].comms[1].lifecycle == detect::CommLifecycle::kSuspended);
  CHECK_FALSE(v.processes[1].comms[1].judged());
  CHECK(v.processes[1].comms[2].lifecycle == detect::CommLifecycle::kInitFailed);
  CHECK_FALSE(v.processes[1].comms[2].judged());
  CHECK(v.processes[1].comms[3].comm_hash == 0xabc);
  CHECK_FALSE(v.processes[1].comms[3].left());
  CHECK(v.processes[1].comms[3].judged());
}

TEST_CASE("every way of leaving a communicator is left; untracked ops are copied", "[adapter]") {
  for (shm::CommState state : {shm::CommState::kFinalized, shm::CommState::kDestroyed, shm::CommState::kAborted,
                               shm::CommState::kRevoked}) {
    shm::CommView c = ReadyComm(0xabc, 1, 2, 4, 4);
    c.state = state;
    c.untracked_ops = 3;
    const detect::CommFacts f = CommFactsFromSnapshot(c);
    CHECK(f.left());
    CHECK(f.untracked_ops == 3);
    CHECK(f.last_enqueued_seq == 4);
  }
  CHECK_FALSE(CommFactsFromSnapshot(ReadyComm(0xabc, 1, 2, 4, 4)).left());
}

TEST_CASE("a process that recorded its exit is not alive, even while its pid runs", "[adapter]") {
  shm::ProcessView by_status = Process(21, 0, /*alive=*/true);
  by_status.exited = true;
  by_status.exit_how = shm::ExitHow::kStatus;
  by_status.exit_status = 3;
  by_status.exit_ns = 777;
  const detect::ProcessFacts s = ProcessFactsFromSnapshot(by_status);
  CHECK_FALSE(s.alive);
  CHECK(s.exit.recorded);
  CHECK(s.exit.status == 3);
  CHECK(s.exit.signal == 0);
  CHECK(s.exit.exit_ns == 777);

  shm::ProcessView by_signal = Process(22, 1, /*alive=*/false);
  by_signal.exited = true;
  by_signal.exit_how = shm::ExitHow::kSignal;
  by_signal.exit_signal = 6;
  by_signal.exit_status = 99;  // not meaningful for a signal
  const detect::ProcessFacts g = ProcessFactsFromSnapshot(by_signal);
  CHECK_FALSE(g.alive);
  CHECK(g.exit.recorded);
  CHECK(g.exit.signal == 6);
  CHECK(g.exit.status == 0);

  const detect::ProcessFacts live = ProcessFactsFromSnapshot(Process(23, 2));
  CHECK(live.alive);
  CHECK_FALSE(live.exit.recorded);
}

TEST_CASE("blocked host syncs are kept with their target; idle slots are not", "[adapter]") {
  shm::ProcessView p = Process(5, 0);
  shm::SyncView idle;
  idle.kind = shm::SyncKind::kStream;
  shm::SyncView stream;
  stream.kind = shm::SyncKind::kStream;
  stream.target = 0x1234;
  stream.blocked_since_ns = 77;
  shm::SyncView device;
  device.kind = shm::SyncKind::kDevice;
  device.device = 3;
  device.blocked_since_ns = 88;
  p.sync_slots = {idle, stream, device};
  const detect::ProcessFacts v = ProcessFactsFromSnapshot(p);
  REQUIRE(v.syncs.size() == 2);
  CHECK(v.syncs[0].target == detect::SyncTarget::kStream);
  CHECK(v.syncs[0].handle == 0x1234);
  CHECK(v.syncs[1].target == detect::SyncTarget::kDevice);
  CHECK(v.syncs[1].handle == 3);
}

TEST_CASE("the adapted view lets the detector name a straggler", "[adapter]") {
  // Ranks 0 and 1 issued #3 at t = 3 s; rank 2 stopped after #2.
  shm::JobSnapshot snap;
  for (int r = 0; r < 3; ++r) {
    shm::ProcessView p = Process(100 + r, r);
    p.comms.push_back(ReadyComm(0xfeed, r, 3, r == 2 ? 2 : 3, 2));
    snap.processes.push_back(p);
  }
  detect::DetectConfig config;
  config.stall_threshold_ns = 2 * detect::kNsPerSec;
  const auto early = detect::Classify(FactsFromSnapshot(snap), config, 4 * detect::kNsPerSec);
  CHECK(early.empty());
  const auto late = detect::Classify(FactsFromSnapshot(snap), config, 6 * detect::kNsPerSec);
  REQUIRE(late.size() == 1);
  CHECK(late[0].kind == detect::VerdictKind::kStraggler);
  CHECK(late[0].seq == 3);
  CHECK(late[0].op == "AllReduce");
  CHECK(late[0].culprit_ranks == std::vector<int>{2});
}

}  // namespace
}  // namespace ncclwatch::watch
