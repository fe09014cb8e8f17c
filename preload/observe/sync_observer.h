// Publishes that the calling thread is blocked in a CUDA host sync (what on, since when).
// Inline: it sits on cudaStreamSynchronize's path (budget: tens of nanoseconds).
#ifndef NCCLWATCH_PRELOAD_OBSERVE_SYNC_OBSERVER_H_
#define NCCLWATCH_PRELOAD_OBSERVE_SYNC_OBSERVER_H_

#include <cstdint>

#include "core/shm/layout.h"
#include "core/shm/sync_slot.h"

namespace ncclwatch::preload {

// The calling thread's sync slot, or nullptr when it must not publish (inert,
// pass-through, called from inside NCCL, no free slot, or already blocked in a sync: the
// dynamic runtime's cudaStreamSynchronize calls the driver's cuStreamSynchronize, which a
// runtime that looked it up through us reaches as our hook too, and the outer call is what
// the job made). Marks the thread blocked.
shm::SyncSlot* BeginSync(shm::SyncKind kind, shm::SyncApi api, uint64_t target) noexcept;
inline void EndSync(shm::SyncSlot* slot) noexcept { shm::MarkSyncReturned(*slot); }

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_SYNC_OBSERVER_H_
