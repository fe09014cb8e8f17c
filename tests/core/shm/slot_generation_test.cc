// Comm slots past the limit are counted, and a slot whose old communicator still has a
// completion event pending is never handed to a new communicator.
#include <catch2/catch.hpp>

#include <vector>

#include "core/shm/reader.h"
#include "core/shm/record_flags.h"
#include "segment_test_util.h"

namespace ncclwatch::shm {
namespace {

using testing::ScopedSegment;
using testing::UniqueJobId;

std::vector<CommSlot> ClaimAll(SegmentWriter& segment) {
  std::vector<CommSlot> slots;
  for (uint32_t i = 0; i < kMaxComms; ++i) {
    slots.push_back(segment.ClaimCommSlot().value());
    REQUIRE(slots.back().valid());
    slots.back().BeginInit(i + 16, 1);
  }
  return slots;
}

TEST_CASE("communicators past the last slot are counted as unwatched", "[segment]") {
  const std::string job = UniqueJobId("unwatched");
  ScopedSegment segment(job, 16);
  ClaimAll(*segment);
  CHECK_FALSE(segment->ClaimCommSlot().ok());
  CHECK_FALSE(segment->ClaimCommSlot().ok());
  const JobSnapshot snap = ReadJobSnapshot(job, getuid(), 4);
  REQUIRE(snap.processes.size() == 1);
  CHECK(snap.processes[0].comms_unwatched == 2);
  CHECK(snap.processes[0].comms.size() == kMaxComms);
}

TEST_CASE("a destroyed communicator's slot stays pinned while its events are pending", "[segment]") {
  ScopedSegment segment(UniqueJobId("pinned"), 16);
  std::vector<CommSlot> slots = ClaimAll(*segment);
  const uint32_t old_generation = slots[5].generation();
  slots[5].EventRecorded();
  slots[5].SetState(CommState::kDestroyed);
  CHECK_FALSE(segment->ClaimCommSlot().ok());
  slots[5].EventReleased();
  CommSlot reused = segment->ClaimCommSlot().value();
  REQUIRE(reused.header() == slots[5].header());
  reused.BeginInit(99, 2);
  CHECK(reused.generation() == old_generation + 1);
}

TEST_CASE("untracked records are counted once each", "[segment]") {
  const std::string job = UniqueJobId("untracked");
  ScopedSegment segment(job, 16);
  CommSlot slot = segment->ClaimCommSlot().value();
  slot.BeginInit(7, 1);
  OpFingerprint op;
  op.op = Op::kAllReduce;
  const RecordRef a = slot.Append(op, 0, 2);
  const RecordRef b = slot.Append(op, 0, 3);
  slot.AddFlags(a, kRecordUntracked);
  slot.AddFlags(a, kRecordUntracked | kRecordInGroup);
  slot.AddFlags(b, kRecordFailed);
  slot.CountUntracked(2);
  const JobSnapshot snap = ReadJobSnapshot(job, getuid(), 4);
  REQUIRE(snap.processes.size() == 1);
  REQUIRE(snap.processes[0].comms.size() == 1);
  CHECK(snap.processes[0].comms[0].untracked_ops == 3);
}

}  // namespace
}  // namespace ncclwatch::shm
