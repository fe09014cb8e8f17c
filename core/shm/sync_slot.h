// Writer side of a SyncSlot: the owning thread marks itself blocked in a CUDA host sync
// and unblocked again. Inline because it sits on the cudaStreamSynchronize path.
#ifndef NCCLWATCH_CORE_SHM_SYNC_SLOT_H_
#define NCCLWATCH_CORE_SHM_SYNC_SLOT_H_

#include <cstdint>

#include "core/shm/layout.h"
#include "core/shm/seqlock.h"

namespace ncclwatch::shm {

inline void MarkSyncBlocked(SyncSlot& slot, SyncKind kind, SyncApi api, uint64_t target, int device,
                            uint64_t now_ns) {
  const uint32_t v = SeqlockWriteBegin(slot.version);
  slot.kind.store(static_cast<uint32_t>(kind), std::memory_order_relaxed);
  slot.api.store(static_cast<uint32_t>(api), std::memory_order_relaxed);
  slot.target.store(target, std::memory_order_relaxed);
  slot.device.store(device, std::memory_order_relaxed);
  slot.blocked_since_ns.store(now_ns, std::memory_order_relaxed);
  SeqlockWriteEnd(slot.version, v);
}

inline void MarkSyncReturned(SyncSlot& slot) {
  const uint32_t v = SeqlockWriteBegin(slot.version);
  slot.blocked_since_ns.store(0, std::memory_order_relaxed);
  slot.syncs_completed.store(slot.syncs_completed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  SeqlockWriteEnd(slot.version, v);
}

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_SYNC_SLOT_H_
