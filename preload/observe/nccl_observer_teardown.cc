// The communicator's state after Finalize, Destroy, Abort, Revoke, Suspend and Resume, and
// what ncclCommGetAsyncError reports (which also completes nonblocking inits and enqueues).
#include "core/clock/monotonic.h"
#include "core/clock/stamp_clock.h"
#include "preload/lifecycle/last_gasp.h"
#include "preload/observe/nccl_observer.h"
#include "preload/observe/nccl_observer_internal.h"

namespace ncclwatch::preload {

using shm::CommState;

bool EnterObserved(ThreadState** thread) noexcept {
  return BeginObserved(Activation::kIfActive, "EnterObserved",
                       [&](Runtime*, ThreadState* ts) { *thread = ts; });
}

void LeaveObserved(ThreadState*) noexcept { --ThisThreadDepths().reentry; }

void ObserveTeardown(ncclComm_t comm, Teardown kind, ncclResult_t result) noexcept {
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr) return;
  CommEntry* entry = rt->comms.Find(Handle(comm));
  if (entry == nullptr) return;
  const bool accepted = result == ncclSuccess || result == ncclInProgress;
  Guarded("ObserveTeardown", [&] {
    switch (kind) {
      case Teardown::kFinalize:
        if (accepted) entry->slot.SetState(CommState::kFinalized);
        break;
      case Teardown::kRevoke:
        if (accepted) entry->slot.SetState(CommState::kRevoked);
        break;
      case Teardown::kSuspend:  // idle by request: the detector must not call it hung
        if (accepted) entry->slot.SetState(CommState::kSuspended);
        break;
      case Teardown::kResume:
        if (accepted) entry->slot.SetState(CommState::kReady);
        break;
      case Teardown::kDestroy:
      case Teardown::kAbort:
        if (!accepted && kind == Teardown::kDestroy) break;
        entry->slot.SetState(kind == Teardown::kDestroy ? CommState::kDestroyed : CommState::kAborted);
        rt->comms.Erase(entry->handle);
        break;
    }
  });
}

void ObserveTeardownStart(ncclComm_t comm, Teardown kind) noexcept {
  if (kind != Teardown::kAbort && kind != Teardown::kRevoke) return;
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr) return;
  CommEntry* entry = rt->comms.Find(Handle(comm));
  if (entry == nullptr) return;
  Guarded("ObserveTeardownStart", [&] {
    // The evidence first, while the ops still read as pending; then they are marked aborted.
    if (LastGaspWorthy(entry->slot.OldestPendingEnqueueNs(), clock::MonotonicNowNs())) {
      RunLastGasp(kind == Teardown::kAbort ? kLastGaspCommAbort : kLastGaspCommRevoke);
    }
    entry->slot.MarkPendingAborted();
  });
}

void ObserveAsyncError(ncclComm_t comm, ncclResult_t call_result, const ncclResult_t* async_error) noexcept {
  if (call_result != ncclSuccess || async_error == nullptr) return;
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr) return;
  CommEntry* entry = rt->comms.Find(Handle(comm));
  if (entry == nullptr) return;
  Guarded("ObserveAsyncError", [&] {
    const ncclResult_t state = *async_error;
    entry->slot.SetAsyncError(state, clock::StampNowNs());
    if (state == ncclInProgress) return;
    if (entry->init_pending.exchange(false)) {
      if (state == ncclSuccess) {
        CompleteInit(rt, entry, comm, IsRootComm(*entry));
      } else {
        entry->slot.FinishInit(false, state, clock::StampNowNs());
      }
    }
    // Only now may CUDA work go on the communicator's streams.
    if (state == ncclSuccess) FlushDeferred(rt, entry);
  });
}

}  // namespace ncclwatch::preload
