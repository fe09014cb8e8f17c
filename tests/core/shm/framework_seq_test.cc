// Framework sequence numbers: each record's launch number, counted by Append as
// torch counts its collectives (one per ungrouped collective, one per group of collectives on
// the communicator) and its P2P ops, packed beside the count and restored by the reader.
#include <catch2/catch.hpp>

#include <vector>

#include "core/shm/reader.h"
#include "core/shm/record_flags.h"
#include "segment_test_util.h"

namespace ncclwatch::shm {
namespace {

using testing::ScopedSegment;
using testing::UniqueJobId;

OpFingerprint Collective(uint64_t count) { return {Op::kAllReduce, 7, 0, count, -1, 0x55}; }
OpFingerprint P2P(Op op, int32_t peer) { return {op, 7, 0, 16, peer, 0x55}; }
constexpr uint32_t kGrouped = kRecordInGroup | RecordGroupBits(1);

// framework_seq of every record of the job's first communicator, oldest first.
std::vector<uint64_t> FrameworkSeqs(const std::string& job, size_t comm = 0) {
  const JobSnapshot snap = ReadJobSnapshot(job);
  REQUIRE(snap.processes.size() == 1);
  REQUIRE(snap.processes[0].comms.size() > comm);
  std::vector<uint64_t> seqs;
  for (const RecordView& r : snap.processes[0].comms[comm].records) seqs.push_back(r.framework_seq);
  return seqs;
}

TEST_CASE("count and launch pack into one word and unpack, the count saturating at 2^40 - 1", "[framework_seq]") {
  const CountAndLaunch small = UnpackCountAndLaunch(PackCountAndLaunch(1024, 25));
  CHECK(small.count == 1024);
  CHECK(small.launch_low == 25);
  const CountAndLaunch largest = UnpackCountAndLaunch(PackCountAndLaunch(kMaxRecordCount - 1, kLaunchLowMask));
  CHECK(largest.count == kMaxRecordCount - 1);
  CHECK(largest.launch_low == kLaunchLowMask);
  // A count of 2^40 or more keeps 2^40 - 1 and leaves the launch bits alone.
  for (const uint64_t huge : {kMaxRecordCount, kMaxRecordCount + 1, ~uint64_t{0}}) {
    const CountAndLaunch saturated = UnpackCountAndLaunch(PackCountAndLaunch(huge, 3));
    CHECK(saturated.count == kMaxRecordCount);
    CHECK(saturated.launch_low == 3);
  }
  // Only the launch's low 24 bits are kept.
  CHECK(UnpackCountAndLaunch(PackCountAndLaunch(5, (uint64_t{1} << 24) + 9)).launch_low == 9);
}

TEST_CASE("a launch is restored from its low bits and the counter, behind it or just ahead", "[framework_seq]") {
  const uint64_t wrap = uint64_t{1} << 24;
  CHECK(RestoreLaunch(25, 25) == 25);
  CHECK(RestoreLaunch(20, 25) == 20);
  CHECK(RestoreLaunch(wrap - 1, wrap + 2) == wrap - 1);  // counter past the wrap, record before
  CHECK(RestoreLaunch(1, wrap + 2) == wrap + 1);
  CHECK(RestoreLaunch(static_cast<uint32_t>((3 * wrap + 5) & kLaunchLowMask), 3 * wrap + 70000) == 3 * wrap + 5);
  CHECK(RestoreLaunch(3, wrap - 2) == wrap + 3);  // read a few records ahead of the counter
  CHECK(RestoreLaunch(27, 25) == 27);
  CHECK(RestoreLaunch(0, 0) == 0);  // nothing launched: unknown
  CHECK(RestoreLaunch(kLaunchLowMask, 1) == 0);
}

TEST_CASE("ungrouped collectives take one launch each, a group's collectives on a comm one", "[framework_seq]") {
  const std::string job = UniqueJobId("fwseq_groups");
  ScopedSegment segment(job, 64);
  CommSlot a = segment->ClaimCommSlot().value();
  CommSlot b = segment->ClaimCommSlot().value();
  a.BeginInit(0xa, 1);
  b.BeginInit(0xb, 1);
  a.Append(Collective(1), 0, 10);  // launch 1
  a.Append(Collective(2), 0, 11);  // 2
  // One group (key 7): two collectives on a, one on b, interleaved as the caller issued them.
  a.Append(Collective(3), kGrouped, 12, 7);  // a: 3
  b.Append(Collective(3), kGrouped, 12, 7);  // b: 1
  a.Append(Collective(4), kGrouped, 12, 7);  // a: 3 again
  // The next group (key 8), then one whose 16-bit serial repeats the first's: new launches.
  a.Append(Collective(5), kGrouped, 13, 8);          // a: 4
  a.Append(Collective(6), kGrouped, 14, 8 + 65535);  // a: 5
  a.Append(Collective(7), 0, 15);                    // a: 6
  a.Append(Collective(8), kGrouped, 16, 8 + 65535);  // a: 7 (not consecutive with its key's last)
  CHECK(FrameworkSeqs(job, 0) == std::vector<uint64_t>{1, 2, 3, 3, 4, 5, 6, 7});
  CHECK(FrameworkSeqs(job, 1) == std::vector<uint64_t>{1});
  const JobSnapshot snap = ReadJobSnapshot(job);
  CHECK(snap.processes[0].comms[0].collective_launches == 7);
  CHECK(snap.processes[0].comms[0].last_enqueued_seq == 8);  // #N still counts NCCL calls
  // A new communicator in the slot counts from 1 again.
  b.BeginInit(0xc, 2);
  b.Append(Collective(1), kGrouped, 20, 7);
  CHECK(FrameworkSeqs(job, 1) == std::vector<uint64_t>{1});
}

TEST_CASE("P2P ops are numbered in issue order, sends and receives together", "[framework_seq]") {
  const std::string job = UniqueJobId("fwseq_p2p");
  ScopedSegment segment(job, 64);
  CommSlot slot = segment->ClaimCommSlot().value();
  slot.BeginInit(0xa, 1);
  slot.Append(P2P(Op::kRecv, 0), kGrouped, 10, 1);  // p2p 1
  slot.Append(Collective(8), 0, 11);                // collective 1
  slot.Append(P2P(Op::kSend, 0), kGrouped, 12, 2);  // p2p 2
  slot.Append(P2P(Op::kSend, 1), kGrouped, 12, 2);  // p2p 3: one group, still one each
  slot.Append(Collective(8), kGrouped, 12, 2);      // collective 2
  slot.Append(P2P(Op::kRecv, 1), 0, 13);            // p2p 4
  CHECK(FrameworkSeqs(job) == std::vector<uint64_t>{1, 1, 2, 3, 2, 4});
  const JobSnapshot snap = ReadJobSnapshot(job);
  CHECK(snap.processes[0].comms[0].p2p_launches == 4);
  CHECK(snap.processes[0].comms[0].records[2].seq == 1);  // per peer and direction, as before
}

TEST_CASE("the reader restores launch numbers across the 2^24 wrap of their low bits", "[framework_seq]") {
  const std::string job = UniqueJobId("fwseq_wrap");
  ScopedSegment segment(job, 16);
  CommSlot slot = segment->ClaimCommSlot().value();
  slot.BeginInit(0xa, 1);
  const uint64_t wrap = uint64_t{1} << 24;
  slot.header()->collective_launches.store(3 * wrap - 10);  // as after 3 x 2^24 - 10 launches
  slot.header()->p2p_launches.store(wrap - 1);
  for (int i = 0; i < 20; ++i) slot.Append(Collective(i), 0, 10 + i);  // 3*2^24-9 .. 3*2^24+10
  slot.Append(P2P(Op::kSend, 1), 0, 40);
  const std::vector<uint64_t> seqs = FrameworkSeqs(job);
  REQUIRE(seqs.size() == 16);  // the ring keeps 16: collectives 3*2^24-4 .. 3*2^24+10 and the send
  for (size_t i = 0; i + 1 < seqs.size(); ++i) CHECK(seqs[i] == 3 * wrap - 4 + i);
  CHECK(seqs.back() == wrap);
}

}  // namespace
}  // namespace ncclwatch::shm
