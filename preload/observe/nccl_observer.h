// What the NCCL hooks do around the real call (through the tracking kinds of
// nccl_tracking.h). Every Begin* returns false when the call must simply be forwarded
// (pass-through, inert, or a call NCCL makes from inside a hooked one); otherwise the
// matching End* must follow the real call. An op on a communicator ncclwatch does not know
// is still begun (it keeps NCCL's nested calls out) but publishes nothing.
// None of these throw: an internal failure disables ncclwatch for the process.
// Implemented in nccl_observer_{ops,groups,init,teardown}.cc.
#ifndef NCCLWATCH_PRELOAD_OBSERVE_NCCL_OBSERVER_H_
#define NCCLWATCH_PRELOAD_OBSERVE_NCCL_OBSERVER_H_

#include <nccl.h>

#include <cstdint>

#include "core/shm/comm_slot.h"

namespace ncclwatch::preload {

struct Runtime;
struct ThreadState;
struct CommEntry;

// ---- Collectives and point-to-point.
// The hook builds `op` in place (no copy); BeginOp sets the rest when it returns true, and
// only then does the hook call EndOp. The pointers are left uninitialised: no stores for
// them on every op.
struct OpCall {
  shm::OpFingerprint op;
  Runtime* runtime;
  ThreadState* thread;
  CommEntry* comm;  // null: a communicator ncclwatch does not know (no record)
  shm::RecordRef record;
};
bool BeginOp(ncclComm_t comm, OpCall* call) noexcept;
void EndOp(OpCall* call, ncclResult_t result) noexcept;

// ---- Groups (the depth counting is inline, in group_depth.h).
enum class GroupEndKind { kLaunch, kSimulate };
// The outermost end of a group that published records or buffered inits, after the real
// call: completion events (kLaunch), or its records taken back (kSimulate); and the inits.
void EndOutermostGroup(GroupEndKind kind, ncclResult_t result) noexcept;
// The same for a launched group whose records are on one communicator and stream
// (GroupWork::kOneRange): one completion event, as for an op outside a group.
void SettleGroupRange(ncclResult_t result) noexcept;

// ---- Communicator creation.
enum class InitKind { kRoot, kAll, kSplit, kShrink };
struct InitCall {
  Runtime* runtime = nullptr;
  ThreadState* thread = nullptr;
  InitKind kind = InitKind::kRoot;
  uint64_t start_ns = 0;
  CommEntry* entry = nullptr;    // kRoot/kSplit/kShrink: published before the call
  CommEntry* parent = nullptr;   // kSplit/kShrink
  int color = 0;                 // kSplit
  int predicted_split_count = 0;  // kSplit
};
// `unique_id` is the (first) ncclUniqueId for kRoot; `nranks`/`rank` as passed.
bool BeginRootInit(const ncclUniqueId* unique_id, int nranks, int rank, const ncclConfig_t* config,
                   InitCall* call) noexcept;
bool BeginInitAll(InitCall* call) noexcept;
bool BeginSplit(ncclComm_t parent, int color, const ncclConfig_t* config, InitCall* call) noexcept;
bool BeginShrink(ncclComm_t parent, const ncclConfig_t* config, InitCall* call) noexcept;
// `comms` points at `count` communicator handles written by NCCL.
void EndInit(InitCall* call, ncclResult_t result, const ncclComm_t* comms, int count) noexcept;

// Called by the ncclGetUniqueId hook after the real call (captures InitAll's id).
void ObserveUniqueId(const ncclUniqueId* id, ncclResult_t result) noexcept;

// ---- Communicator teardown and errors.
// kSuspend/kResume (NCCL 2.29) are not teardown but share its shape: a state change.
enum class Teardown { kFinalize, kDestroy, kAbort, kRevoke, kSuspend, kResume };
void ObserveTeardown(ncclComm_t comm, Teardown kind, ncclResult_t result) noexcept;
// Before the call: an abort or revoke flags the communicator's pending ops as aborted first,
// since tearing down its kernels completes their events.
void ObserveTeardownStart(ncclComm_t comm, Teardown kind) noexcept;
void ObserveAsyncError(ncclComm_t comm, ncclResult_t call_result, const ncclResult_t* async_error) noexcept;

// Guards calls that only need NCCL's nested calls ignored (teardown, async error).
bool EnterObserved(ThreadState** thread) noexcept;
void LeaveObserved(ThreadState* thread) noexcept;

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_NCCL_OBSERVER_H_
