#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <thread>

#include "core/shm/comm_slot.h"
#include "core/shm/reader.h"
#include "segment_test_util.h"
#include "core/shm/record_flags.h"
#include "core/shm/sync_slot.h"

namespace ncclwatch::shm {
namespace {

using testing::ScopedSegment;
using testing::UniqueJobId;

// 256 slots of a 64 KiB ring and a 2 KiB replay ring each: 17 MiB of address space, of which /dev/shm holds only the
// pages written (the slots and ring entries actually used).
TEST_CASE("default geometry: 256 comm slots in at most 17 MiB per process", "[segment]") {
  const SegmentGeometry g = ComputeGeometry(kDefaultRingCapacity);
  CHECK(g.ring_capacity == 1024);
  CHECK(kMaxComms >= 256);
  CHECK(g.comm_slot_bytes <= 66 * 1024 + 2048);
  CHECK(g.segment_bytes <= 17 * 1024 * 1024 + 512 * 1024);
  CHECK(NormalizeRingCapacity(1000) == 1024);
  CHECK(NormalizeRingCapacity(1) == kMinRingCapacity);
  CHECK(NormalizeRingCapacity(uint64_t{1} << 40) == kMaxRingCapacity);
}

TEST_CASE("layout: the parts of a segment are aligned, in order and never overlap", "[segment][layout]") {
  for (uint32_t capacity : {kMinRingCapacity, kDefaultRingCapacity, kMaxRingCapacity}) {
    const SegmentGeometry g = ComputeGeometry(capacity);
    CAPTURE(capacity);
    CHECK(sizeof(SegmentHeader) <= kHeaderBytes);
    CHECK(g.sync_slots_offset >= kHeaderBytes);
    CHECK(g.sync_slots_offset + uint64_t{kMaxSyncSlots} * sizeof(SyncSlot) <= g.comm_slots_offset);
    CHECK(g.comm_slots_offset % 4096 == 0);
    CHECK(g.segment_bytes % 4096 == 0);
    for (uint32_t i : {0u, 1u, kMaxComms - 1}) {
      CAPTURE(i);
      CHECK(g.CommSlotOffset(i) == g.comm_slots_offset + uint64_t{i} * g.comm_slot_bytes);
      CHECK(g.CommSlotOffset(i) % 64 == 0);
      CHECK(g.RingOffset(i) % 64 == 0);
      CHECK(g.RingOffset(i) >= g.CommSlotOffset(i) + sizeof(CommSlotHeader));
      // The replay ring follows the ring and ends the slot.
      CHECK(g.RingOffset(i) + uint64_t{g.ring_capacity} * sizeof(RingRecord) == g.ReplayRingOffset(i));
      CHECK(g.ReplayRingOffset(i) % 64 == 0);
      CHECK(g.ReplayRingOffset(i) + SegmentGeometry::kReplayRingBytes == g.CommSlotOffset(i) + g.comm_slot_bytes);
    }
    CHECK(g.CommSlotOffset(kMaxComms - 1) + g.comm_slot_bytes <= g.segment_bytes);
  }
}

TEST_CASE("layout: a written header declares the computed geometry", "[segment][layout]") {
  ScopedSegment segment(UniqueJobId("geometry"), 64);
  const SegmentGeometry computed = ComputeGeometry(64);
  const SegmentGeometry declared = GeometryOf(segment->header());
  CHECK(declared.ring_capacity == computed.ring_capacity);
  CHECK(declared.comm_slot_bytes == computed.comm_slot_bytes);
  CHECK(declared.sync_slots_offset == computed.sync_slots_offset);
  CHECK(declared.comm_slots_offset == computed.comm_slots_offset);
  CHECK(declared.segment_bytes == computed.segment_bytes);
  // The writer's slots sit where a reader computes them.
  const auto* base = reinterpret_cast<const char*>(&segment->header());
  for (uint32_t i : {0u, 5u, kMaxComms - 1}) {
    CHECK(reinterpret_cast<const char*>(segment->CommSlotAt(i).header()) - base ==
          static_cast<std::ptrdiff_t>(declared.CommSlotOffset(i)));
  }
}

TEST_CASE("layout: packed record fields unpack to what was packed", "[segment][layout]") {
  // The on-disk encoding (layout.h): op | datatype << 8 | redop << 16, (uint32)peer | flags << 32.
  CHECK(PackOpAndTypes(Op::kReduce, 7, 2) == 0x020703u);
  CHECK(PackPeerAndFlags(-1, kRecordFailed) == 0x00000004ffffffffull);
  for (Op op : {Op::kNone, Op::kAllReduce, Op::kSend, Op::kWaitSignal}) {
    for (uint8_t datatype : {0, 9, 255}) {
      for (uint8_t redop : {0, 4, 255}) {
        const OpAndTypes back = UnpackOpAndTypes(PackOpAndTypes(op, datatype, redop));
        CHECK(back.op == op);
        CHECK(back.datatype == datatype);
        CHECK(back.redop == redop);
      }
    }
  }
  const uint32_t all_flags = kRecordInGroup | kRecordCaptured | kRecordFailed | kRecordUntracked | kRecordInProgress;
  for (int32_t peer : {-1, 0, 63, INT32_MAX, INT32_MIN}) {
    for (uint32_t flags : {0u, kRecordUntracked, all_flags, ~0u}) {
      const PeerAndFlags back = UnpackPeerAndFlags(PackPeerAndFlags(peer, flags));
      CHECK(back.root_or_peer == peer);
      CHECK(back.flags == flags);
    }
  }
}

TEST_CASE("a communicator's name reads back exact, truncated at 64 bytes, and is cleared by the next init",
          "[segment]") {
  const std::string job = UniqueJobId("comm-name");
  ScopedSegment segment(job, 64);
  CommSlot named = segment->ClaimCommSlot().value();
  CommSlot unnamed = segment->ClaimCommSlot().value();
  const std::string name = "0:default_pg\x1b";
  const std::string long_name(100, 'n');
  named.BeginInit(0x1, 100);
  CommIdentity id{.comm_hash = 0xa, .parent_hash = 0, .rank = 0, .nranks = 1, .device = 0, .flags = kCommHashKnown,
                  .name = PackCommName(name.data(), name.size())};
  named.PublishIdentity(id);
  unnamed.BeginInit(0x2, 100);
  id.comm_hash = 0xb;
  id.name = PackCommName(long_name.data(), long_name.size());
  unnamed.PublishIdentity(id);
  JobSnapshot snap = ReadJobSnapshot(job);
  REQUIRE(snap.processes.size() == 1);
  REQUIRE(snap.processes[0].comms.size() == 2);
  CHECK(snap.processes[0].comms[0].name == name);  // raw bytes: escaping is the printer's
  CHECK(snap.processes[0].comms[1].name == std::string(kCommNameBytes, 'n'));
  unnamed.BeginInit(0x3, 200);  // the slot's next communicator starts without the old name
  snap = ReadJobSnapshot(job);
  REQUIRE(snap.processes[0].comms.size() == 2);
  CHECK(snap.processes[0].comms[1].name.empty());
}

TEST_CASE("published identity, records, peers and syncs read back", "[segment]") {
  const std::string job = UniqueJobId("roundtrip");
  ScopedSegment segment(job, 64);
  CommSlot comm = segment->ClaimCommSlot().value();
  REQUIRE(comm.valid());
  comm.BeginInit(0x1234, 100);
  comm.PublishIdentity({.comm_hash = 0xabcdef, .parent_hash = 0, .rank = 1, .nranks = 2, .device = 0,
                        .flags = kCommHashKnown, .name = {}});
  comm.FinishInit(true, 0, 200);
  const RecordRef first = comm.Append({Op::kAllReduce, 7, 0, 1024, -1, 0x55}, 0, 300);
  const RecordRef send = comm.Append({Op::kSend, 7, 0, 16, 0, 0x55}, kRecordInGroup, 310);
  comm.Append({Op::kSend, 7, 0, 16, 0, 0x55}, kRecordInGroup, 320);
  comm.Append({Op::kBroadcast, 1, 0, 8, 0, 0x66}, 0, 330);
  comm.MarkCompleted(first, 400);
  comm.AddFlags(send, kRecordFailed);
  SyncSlot* sync = segment->ClaimSyncSlot(gettid());
  REQUIRE(sync != nullptr);
  MarkSyncBlocked(*sync, SyncKind::kStream, SyncApi::kDriver, 0x55, 0, 500);

  const JobSnapshot snap = ReadJobSnapshot(job);
  REQUIRE(snap.processes.size() == 1);
  const ProcessView& p = snap.processes[0];
  CHECK(p.pid == getpid());
  CHECK(p.alive);
  CHECK_FALSE(p.stale);
  CHECK(p.global_rank == 3);
  CHECK(p.world_size == 4);
  CHECK(p.job_id == job);
  REQUIRE(p.sync_slots.size() == 1);
  CHECK(p.sync_slots[0].kind == SyncKind::kStream);
  CHECK(p.sync_slots[0].api == SyncApi::kDriver);
  CHECK(p.sync_slots[0].target == 0x55);
  CHECK(p.sync_slots[0].blocked_since_ns == 500);
  REQUIRE(p.comms.size() == 1);
  const CommView& c = p.comms[0];
  CHECK(c.state == CommState::kReady);
  CHECK(c.comm_hash == 0xabcdef);
  CHECK(c.rank == 1);
  CHECK(c.nranks == 2);
  CHECK(c.init_start_ns == 100);
  CHECK(c.init_done_ns == 200);
  CHECK(c.last_enqueued_seq == 2);  // P2P does not advance the collective seq
  CHECK(c.last_completed_seq == 1);
  CHECK(c.last_completed_ns == 400);
  REQUIRE(c.peers.size() == 1);
  CHECK(c.peers[0].peer == 0);
  CHECK(c.peers[0].sends == 2);
  CHECK(c.peers[0].recvs == 0);
  REQUIRE(c.records.size() == 4);
  CHECK(c.records[0].op == Op::kAllReduce);
  CHECK(c.records[0].seq == 1);
  CHECK(c.records[0].count == 1024);
  CHECK(c.records[0].datatype == 7);
  CHECK(c.records[0].complete_ns == 400);
  CHECK(c.records[1].op == Op::kSend);
  CHECK(c.records[1].seq == 1);
  CHECK(c.records[1].flags == (kRecordInGroup | kRecordFailed));
  CHECK(c.records[2].seq == 2);
  CHECK(c.records[3].op == Op::kBroadcast);
  CHECK(c.records[3].seq == 2);
  CHECK(c.records[3].root_or_peer == 0);
  CHECK(c.records[3].stream == 0x66);
  CHECK(c.records[3].complete_ns == 0);

  MarkSyncReturned(*sync);
  const JobSnapshot after = ReadJobSnapshot(job);
  CHECK(after.processes.at(0).sync_slots.at(0).blocked_since_ns == 0);
  CHECK(after.processes.at(0).sync_slots.at(0).syncs_completed == 1);
}

TEST_CASE("the ring keeps the last N records after wrapping", "[segment]") {
  const std::string job = UniqueJobId("wrap");
  ScopedSegment segment(job, 16);
  CommSlot comm = segment->ClaimCommSlot().value();
  comm.BeginInit(1, 1);
  for (int i = 0; i < 40; ++i) comm.Append({Op::kAllReduce, 0, 0, uint64_t(i), -1, 0}, 0, 10 + i);
  const CommView c = ReadJobSnapshot(job).processes.at(0).comms.at(0);
  REQUIRE(c.records.size() == 16);
  CHECK(c.records.front().seq == 25);
  CHECK(c.records.back().seq == 40);
  CHECK(c.records.back().count == 39);

  // A poller that asks for less gets the newest records only; the counters stay whole.
  const CommView recent = ReadJobSnapshot(job, getuid(), 5).processes.at(0).comms.at(0);
  REQUIRE(recent.records.size() == 5);
  CHECK(recent.records.front().seq == 36);
  CHECK(recent.records.back().seq == 40);
  CHECK(recent.records_written == c.records_written);
}

TEST_CASE("comm slots run out, then destroyed ones are reused", "[segment]") {
  ScopedSegment segment(UniqueJobId("slots"), 16);
  std::vector<CommSlot> slots;
  for (uint32_t i = 0; i < kMaxComms; ++i) {
    slots.push_back(segment->ClaimCommSlot().value());
    REQUIRE(slots.back().valid());
    slots.back().BeginInit(i, 1);
  }
  CHECK_FALSE(segment->ClaimCommSlot().ok());
  slots[3].SetState(CommState::kDestroyed);
  CommSlot reused = segment->ClaimCommSlot().value();
  CHECK(reused.header() == slots[3].header());
}

TEST_CASE("a concurrent reader never sees a torn record", "[segment]") {
  const std::string job = UniqueJobId("seqlock");
  ScopedSegment segment(job, 16);
  CommSlot comm = segment->ClaimCommSlot().value();
  comm.BeginInit(1, 1);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint64_t i = 1; !stop.load(std::memory_order_relaxed); ++i) {
      // Every field derives from i, so a mix of two writes is detectable.
      comm.Append({Op::kAllReduce, 0, 0, i * 3, int32_t(i % 1000), i + 7}, 0, i * 11);
    }
  });
  int checked = 0;
  for (int round = 0; round < 300; ++round) {
    const JobSnapshot snap = ReadJobSnapshot(job);
    for (const RecordView& r : snap.processes.at(0).comms.at(0).records) {
      REQUIRE(r.count == r.seq * 3);
      REQUIRE(r.stream == r.seq + 7);
      REQUIRE(r.enqueue_ns == r.seq * 11);
      REQUIRE(r.root_or_peer == int32_t(r.seq % 1000));
      REQUIRE(r.ring_index + 1 == r.seq);
      ++checked;
    }
  }
  stop = true;
  writer.join();
  CHECK(checked > 0);
}

}  // namespace
}  // namespace ncclwatch::shm
