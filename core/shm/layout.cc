#include "core/shm/layout.h"

#include <cstddef>

namespace ncclwatch::shm {
namespace {

constexpr uint64_t RoundUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

static_assert(sizeof(SegmentHeader) <= kHeaderBytes);
// The reservation figures in layout.h ("4 x 66 KiB", 17 MiB for 256 slots) assume this.
static_assert(sizeof(CommSlotHeader) == 1792);
// The appending thread writes these per op: one cache line.
static_assert(offsetof(CommSlotHeader, last_enqueued_seq) / 64 == offsetof(CommSlotHeader, p2p_launches) / 64);
static_assert(offsetof(CommSlotHeader, records_written) / 64 == offsetof(CommSlotHeader, collective_launches) / 64);
// tests/tools/exporter/exporter_test.py and tests/watchdog/hostile_test.py forge segments at
// these byte offsets.
static_assert(offsetof(SegmentHeader, ring_capacity) == 24 && offsetof(SegmentHeader, comm_slot_bytes) == 40 &&
              offsetof(SegmentHeader, comm_slots_offset) == 56 && offsetof(SegmentHeader, pid) == 64 &&
              offsetof(SegmentHeader, process_start_ticks) == 80 && offsetof(SegmentHeader, global_rank) == 304);
static_assert(offsetof(CommSlotHeader, comm_hash) == 8 && offsetof(CommSlotHeader, last_enqueued_seq) == 144 && offsetof(CommSlotHeader, last_completed_seq) == 152);
static_assert(SegmentGeometry::kRingOffsetInCommSlot == 1792 && offsetof(RingRecord, seq) == 16 &&
              offsetof(RingRecord, complete_ns) == 56);
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free);

uint32_t NormalizeRingCapacity(uint64_t requested) {
  if (requested < kMinRingCapacity) requested = kMinRingCapacity;
  if (requested > kMaxRingCapacity) requested = kMaxRingCapacity;
  uint32_t capacity = kMinRingCapacity;
  while (capacity < requested) capacity <<= 1;
  return capacity;
}

SegmentGeometry ComputeGeometry(uint32_t ring_capacity) {
  SegmentGeometry g;
  g.ring_capacity = NormalizeRingCapacity(ring_capacity);
  g.comm_slot_bytes = SegmentGeometry::kRingOffsetInCommSlot + uint64_t{g.ring_capacity} * sizeof(RingRecord);
  g.sync_slots_offset = kHeaderBytes;
  g.comm_slots_offset = RoundUp(g.sync_slots_offset + uint64_t{kMaxSyncSlots} * sizeof(SyncSlot), 4096);
  g.segment_bytes = RoundUp(g.comm_slots_offset + uint64_t{kMaxComms} * g.comm_slot_bytes, 4096);
  return g;
}

SegmentGeometry GeometryOf(const SegmentHeader& h) {
  return {h.ring_capacity, h.comm_slot_bytes, h.sync_slots_offset, h.comm_slots_offset, h.segment_bytes};
}


}  // namespace ncclwatch::shm
