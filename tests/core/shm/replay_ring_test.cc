// CUDA graph replays: each launch's ReplayRecord, written by CommSlot and read back
// by the reader with its graph key, replay number, captured ops, flags and completion; the
// ring keeps the newest kReplayRingCapacity, and an abort flags the pending ones.
#include <catch2/catch.hpp>

#include <vector>

#include "core/shm/reader.h"
#include "core/shm/record_flags.h"
#include "segment_test_util.h"

namespace ncclwatch::shm {
namespace {

using testing::ScopedSegment;
using testing::UniqueJobId;

ReplayEntry Replay(uint64_t graph, uint64_t replay) {
  ReplayEntry entry;
  entry.graph = graph;
  entry.replay = replay;
  entry.first_seq = 3;
  entry.first_framework_seq = 2;
  entry.ops = 2;
  entry.op_codes = AddReplayOpCode(AddReplayOpCode(0, 0, Op::kAllReduce), 1, Op::kBroadcast);
  entry.stream = 0x77;
  return entry;
}

CommView OnlyComm(const std::string& job) {
  const JobSnapshot snap = ReadJobSnapshot(job);
  REQUIRE(snap.processes.size() == 1);
  REQUIRE(snap.processes[0].comms.size() == 1);
  return snap.processes[0].comms[0];
}

TEST_CASE("replay fields pack into their words and back", "[replay]") {
  const ReplayOpsAndFlags of = UnpackReplayOpsAndFlags(PackReplayOpsAndFlags(70000, kRecordFailed | kRecordAborted));
  CHECK(of.ops == 0xffff);  // saturated
  CHECK(of.flags == (kRecordFailed | kRecordAborted));
  const ReplayAndIndex ri = UnpackReplayAndIndex(PackReplayAndIndex(58, (uint64_t{1} << 24) + 5));
  CHECK(ri.replay == 58);
  CHECK(ri.index_low == 5);
  uint64_t codes = 0;
  for (unsigned i = 0; i < kReplayOpCodes + 2; ++i) codes = AddReplayOpCode(codes, i, Op::kReduceScatter);
  CHECK(ReplayOpCodeAt(codes, 0) == Op::kReduceScatter);
  CHECK(ReplayOpCodeAt(codes, kReplayOpCodes - 1) == Op::kReduceScatter);
  CHECK(ReplayOpCodeAt(codes, kReplayOpCodes) == Op::kNone);
}

TEST_CASE("a graph replay round-trips through shared memory", "[replay]") {
  const std::string job = UniqueJobId("replay_roundtrip");
  ScopedSegment segment(job, 64);
  CommSlot slot = segment->ClaimCommSlot().value();
  slot.BeginInit(0xc0, 1);
  // The two captured collectives (#1 and #2 of the communicator, one launch each).
  slot.Append({Op::kAllReduce, 7, 0, 1024, -1, 0x55}, kRecordCaptured, 10);
  slot.Append({Op::kBroadcast, 7, 0, 1024, 0, 0x55}, kRecordCaptured, 11);
  ReplayEntry entry = Replay(0xfeedf00d12345678, 1);
  entry.first_seq = 1;
  entry.first_framework_seq = 1;
  const uint64_t first = slot.AppendReplay(entry, 100);
  entry.replay = 2;
  const uint64_t second = slot.AppendReplay(entry, 200);
  CHECK(first == 0);
  CHECK(second == 1);
  slot.MarkReplayCompleted(first, 150);

  const CommView comm = OnlyComm(job);
  CHECK(comm.replays_written == 2);
  REQUIRE(comm.replays.size() == 2);
  const ReplayView& done = comm.replays[0];
  CHECK(done.ring_index == 0);
  CHECK(done.graph == 0xfeedf00d12345678);
  CHECK(done.replay == 1);
  CHECK(done.first_seq == 1);
  CHECK(done.first_framework_seq == 1);
  CHECK(done.ops == 2);
  CHECK(done.op_codes == std::vector<Op>{Op::kAllReduce, Op::kBroadcast});
  CHECK(done.stream == 0x77);
  CHECK(done.enqueue_ns == 100);
  CHECK(done.complete_ns == 150);
  CHECK(done.flags == 0);
  CHECK(comm.replays[1].replay == 2);
  CHECK(comm.replays[1].complete_ns == 0);
  // The captured records themselves are kept as they were: captured, owing no completion.
  REQUIRE(comm.records.size() == 2);
  CHECK((comm.records[0].flags & kRecordCaptured) != 0);
}

TEST_CASE("the replay ring keeps the newest records; flags and completion reach only their own", "[replay]") {
  const std::string job = UniqueJobId("replay_ring");
  ScopedSegment segment(job, 64);
  CommSlot slot = segment->ClaimCommSlot().value();
  slot.BeginInit(0xc1, 1);
  const uint64_t total = kReplayRingCapacity + 5;
  uint64_t oldest = 0;
  for (uint64_t i = 1; i <= total; ++i) {
    const uint64_t index = slot.AppendReplay(Replay(0xabc, i), 1000 + i);
    if (i == 1) oldest = index;
  }
  // The first record's place was reused: marking or flagging it touches nothing.
  slot.MarkReplayCompleted(oldest, 5);
  slot.AddReplayFlags(oldest, kRecordUntracked);
  slot.AddReplayFlags(total - 1, kRecordUntracked);  // the newest
  const CommView comm = OnlyComm(job);
  CHECK(comm.replays_written == total);
  REQUIRE(comm.replays.size() == kReplayRingCapacity);
  CHECK(comm.replays.front().replay == total - kReplayRingCapacity + 1);
  CHECK(comm.replays.back().replay == total);
  for (const ReplayView& r : comm.replays) {
    CHECK(r.complete_ns == 0);
    CHECK(r.flags == (r.replay == total ? kRecordUntracked : 0u));
  }
  CHECK(comm.untracked_ops == 1);
}

TEST_CASE("a failed launch owes no completion; an abort flags the pending replays and is never complete",
          "[replay]") {
  const std::string job = UniqueJobId("replay_abort");
  ScopedSegment segment(job, 64);
  CommSlot slot = segment->ClaimCommSlot().value();
  slot.BeginInit(0xc2, 1);
  const uint64_t done = slot.AppendReplay(Replay(0xabc, 1), 100);
  const uint64_t failed = slot.AppendReplay(Replay(0xabc, 2), 200);
  const uint64_t pending = slot.AppendReplay(Replay(0xabc, 3), 300);
  slot.MarkReplayCompleted(done, 150);
  slot.AddReplayFlags(failed, kRecordFailed);
  slot.AddReplayFlags(failed, kRecordUntracked);  // a failed launch is never untracked
  CHECK(slot.OldestPendingEnqueueNs() == 300);
  slot.MarkPendingAborted();
  CHECK(slot.OldestPendingEnqueueNs() == 0);
  slot.MarkReplayCompleted(pending, 400);  // the event an abort fires
  const CommView comm = OnlyComm(job);
  REQUIRE(comm.replays.size() == 3);
  CHECK(comm.replays[0].flags == 0);
  CHECK(comm.replays[1].flags == kRecordFailed);
  CHECK(comm.replays[2].flags == kRecordAborted);
  CHECK(comm.replays[2].complete_ns == 0);
  CHECK(comm.untracked_ops == 0);
}

TEST_CASE("a new communicator in the slot starts with no replays", "[replay]") {
  const std::string job = UniqueJobId("replay_reuse");
  ScopedSegment segment(job, 64);
  CommSlot slot = segment->ClaimCommSlot().value();
  slot.BeginInit(0xc3, 1);
  slot.AppendReplay(Replay(0xabc, 1), 100);
  slot.BeginInit(0xc4, 2);
  const CommView comm = OnlyComm(job);
  CHECK(comm.replays_written == 0);
  CHECK(comm.replays.empty());
}

}  // namespace
}  // namespace ncclwatch::shm
