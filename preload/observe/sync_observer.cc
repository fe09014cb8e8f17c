#include "preload/observe/sync_observer.h"

#include "core/shm/hook_clock.h"
#include "core/shm/sync_slot.h"
#include "preload/lifecycle/runtime.h"
#include "preload/observe/thread_state.h"
#include "preload/hooks/hot_path.h"

namespace ncclwatch::preload {

NCCLWATCH_HOT shm::SyncSlot* BeginSync(shm::SyncKind kind, shm::SyncApi api, uint64_t target) noexcept {
  if (PassThroughOnly()) return nullptr;
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr || ThisThreadDepths().reentry > 0) return nullptr;
  try {
    ThreadState* ts = ThisThread(rt->generation);
    if (!ts->sync_slot_claimed) {
      ts->sync_slot_claimed = true;
      ts->sync_slot = rt->segment->ClaimSyncSlot(ts->tid);
    }
    if (ts->sync_slot == nullptr) return nullptr;
    // Only this thread writes its slot: a blocked time still set is the outer sync's.
    if (ts->sync_slot->blocked_since_ns.load(std::memory_order_relaxed) != 0) return nullptr;
    // The device is left unknown (-1): asking would add a CUDA call to every sync.
    shm::MarkSyncBlocked(*ts->sync_slot, kind, api, target, -1, shm::HookClockNowNs());
    return ts->sync_slot;
  } catch (...) {  // inside an interposed CUDA hook (C ABI): nothing may reach the job
    DisableAfterInternalError("BeginSync");
    return nullptr;
  }
}

}  // namespace ncclwatch::preload
