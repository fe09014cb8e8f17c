#include "core/watch/host_view_adapter.h"

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
  const detect::CommView v = ToCommView(c);
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
  const detect::CommView v = ToCommView(c);
  REQUIRE(v.records.size() == 1);
  CHECK(v.records[0].op == "AllReduce");
}

TEST_CASE("only the newest records are kept", "[adapter]") {
  const shm::CommView c = ReadyComm(0xabc, 0, 2, 100, 100);
  const detect::CommView v = ToCommView(c, 8);
  REQUIRE(v.records.size() == 8);
  CHECK(v.records.front().seq == 93);
  CHECK(v.records.back().seq == 100);
}

TEST_CASE("a collective that can never be seen complete does not hold completion back", "[adapter]") {
  shm::CommView c = ReadyComm(0xabc, 0, 2, 3, 2);
  c.records[2].flags = shm::kRecordCaptured;
  CHECK(ToCommView(c).last_completed_seq == 3);
  c.records[2].flags = 0;
  CHECK(ToCommView(c).last_completed_seq == 2);
}

TEST_CASE("a completion seen in the records counts even when the counter lags", "[adapter]") {
  shm::CommView c = ReadyComm(0xabc, 0, 2, 3, 3);
  c.last_completed_seq = 1;
  CHECK(ToCommView(c).last_completed_seq == 3);
}

TEST_CASE("init in progress has no init_done time", "[adapter]") {
  shm::CommView c = ReadyComm(0xabc, 0, 2, 0, 0);
  c.state = shm::CommState::kInitializing;
  CHECK(ToCommView(c).init_done_ns == 0);
  CHECK(ToCommView(c).init_started_ns == 100);
}

TEST_CASE("dead processes stay in the view; closed ones and finished comms go", "[adapter]") {
  shm::JobSnapshot snap;
  shm::ProcessView dead = Process(11, 0, /*alive=*/false);
  dead.comms.push_back(ReadyComm(0xabc, 0, 2, 1, 0));
  shm::ProcessView closed = Process(12, 1);
  closed.closed = true;
  shm::ProcessView live = Process(13, 2);
  shm::CommView destroyed = ReadyComm(0xdef, 0, 2, 1, 1);
  destroyed.state = shm::CommState::kDestroyed;
  live.comms = {destroyed, ReadyComm(0xabc, 1, 2, 1, 0)};
  snap.processes = {dead, closed, live};
  const detect::HostView v = ToHostView(snap);
  REQUIRE(v.processes.size() == 2);
  CHECK(v.processes[0].pid == 11);
  CHECK_FALSE(v.processes[0].alive);
  CHECK(v.processes[0].comms.size() == 1);
  CHECK(v.processes[1].pid == 13);
  REQUIRE(v.processes[1].comms.size() == 1);
  CHECK(v.processes[1].comms[0].comm_hash == 0xabc);
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
  const detect::ProcessView v = ToProcessView(p);
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
  const auto early = detect::Classify(ToHostView(snap), config, 4 * detect::kNsPerSec);
  CHECK(early.empty());
  const auto late = detect::Classify(ToHostView(snap), config, 6 * detect::kNsPerSec);
  REQUIRE(late.size() == 1);
  CHECK(late[0].kind == detect::VerdictKind::kStraggler);
  CHECK(late[0].seq == 3);
  CHECK(late[0].op == "AllReduce");
  CHECK(late[0].culprit_ranks == std::vector<int>{2});
}

}  // namespace
}  // namespace ncclwatch::watch
