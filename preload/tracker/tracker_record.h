// The hook's half of the completion tracker (tracker.h): Tracker::RecordCompletion and the
// steps it takes per op, inline so that the hook that settles an op runs them without a call.
//
// As calls, PoolFor, Claim, Record and DriverRecord cost a fifth of the tracker's 130
// instructions per op, and RecordCompletion itself, called from the settle, about 30 more
// (callgrind). Their rare paths (a new pool, an event to create, a refused direct
// record, a capture query) stay out of line in tracker.cc. Included by tracker.cc and by the
// settle (nccl_observer_ops.cc) only.
#ifndef NCCLWATCH_PRELOAD_TRACKER_TRACKER_RECORD_H_
#define NCCLWATCH_PRELOAD_TRACKER_TRACKER_RECORD_H_

#include <atomic>
#include <cstdint>

#include "core/shm/layout.h"
#include "core/shm/record_flags.h"
#include "preload/observe/capture_watch.h"
#include "preload/real/driver_api.h"
#include "preload/hooks/hot_path.h"
#include "preload/tracker/tracker.h"

namespace ncclwatch::preload {

NCCLWATCH_HOT_INLINE Tracker::DevicePool* Tracker::PoolFor(int device) {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  DevicePool* pool = pools_[device].load(std::memory_order_acquire);
  if (pool != nullptr) [[likely]] return pool;
  return NewPool(device);
}

NCCLWATCH_HOT_INLINE Tracker::EventSlot* Tracker::Claim(DevicePool* pool) {
  // Slots are claimed in cursor order and mostly freed in the same order, so the slot at
  // the cursor is usually free. The cursor is a hint (a load and a store, no read-modify-write
  // on the hot path): threads racing for one slot are told apart by the slot's CAS. A full
  // pool costs kClaimProbes relaxed loads.
  const uint32_t start = pool->cursor.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < kClaimProbes; ++i) {
    const uint32_t index = (start + i) % kEventsPerDevice;
    EventSlot& slot = pool->slots[index];
    uint32_t expected = kFree;
    if (slot.state.load(std::memory_order_relaxed) == kFree &&
        slot.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
      pool->cursor.store(index + 1, std::memory_order_relaxed);
      // The slot the next claim looks at first: in a burst of ops its line is then in
      // cache (its state load was the costliest instruction of the claim).
      __builtin_prefetch(&pool->slots[(index + 1) % kEventsPerDevice], 1);
      return &slot;
    }
  }
  return nullptr;
}

NCCLWATCH_HOT_INLINE bool Tracker::Record(DevicePool* pool, EventSlot* slot, uint64_t stream) {
  if (driver_ != nullptr) return DriverRecord(pool, slot->event, stream);
  if (cuda_.EventRecord(slot->event, reinterpret_cast<cudaStream_t>(stream)) == cudaSuccess) return true;
  cuda_.GetLastError();  // only reached with no error pending before
  return false;
}

// A created stream carries its own context: the event is recorded on it directly, whatever
// context is current (one call). The legacy and per-thread default streams are the current
// context's: those are recorded with the event's context current (cuCtxGetCurrent, and a push
// and pop when it differs). Should a driver refuse the direct record where the pushed one
// works, the device's pool records the pushed way from then on.
NCCLWATCH_HOT_INLINE bool Tracker::DriverRecord(DevicePool* pool, cudaEvent_t event, uint64_t stream) {
  const bool default_stream = stream == 0 || stream == reinterpret_cast<uint64_t>(CU_STREAM_LEGACY) ||
                              stream == reinterpret_cast<uint64_t>(CU_STREAM_PER_THREAD);
  if (!default_stream && pool->direct_record.load(std::memory_order_relaxed)) {
    if (driver_->EventRecord(reinterpret_cast<CUevent>(event), DriverStream(stream)) == CUDA_SUCCESS) [[likely]] {
      return true;
    }
    return DirectRecordRefused(pool, event, stream);
  }
  return PushedRecord(pool, event, stream);
}

NCCLWATCH_HOT_INLINE uint32_t Tracker::RecordCompletion(int device, uint64_t stream, const CompletionTarget& target) {
  if (events_disabled_.load(std::memory_order_relaxed) || !started_.load(std::memory_order_relaxed)) {
    return shm::kRecordUntracked;
  }
  // The common case, with the driver and no capture in progress: cuEventRecord, nothing else.
  if (driver_ == nullptr && cuda_.PeekAtLastError() != cudaSuccess) return shm::kRecordUntracked;
  if (CaptureQueryNeeded()) {
    const uint32_t capture = CaptureFlags(reinterpret_cast<cudaStream_t>(stream));
    if (capture != 0) return capture;
  }

  DevicePool* pool = PoolFor(device);
  EventSlot* slot = pool == nullptr ? nullptr : Claim(pool);
  if (slot == nullptr) return shm::kRecordUntracked;
  if ((slot->event == nullptr && !CreateEvent(device, pool, &slot->event)) || !Record(pool, slot, stream)) {
    Release(pool, slot);
    return shm::kRecordUntracked;
  }
  slot->target = target;
  slot->target.generation = target.slot->generation();
  target.slot->EventRecorded();
  slot->state.store(kPending, std::memory_order_release);
  // Tells the tracker to poll: a plain store (no read-modify-write). Released after the
  // slot's state, and taken down by the tracker's exchange, which then sees the slot pending.
  recorded_since_poll_.store(true, std::memory_order_release);
  return 0;
}

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_TRACKER_TRACKER_RECORD_H_
