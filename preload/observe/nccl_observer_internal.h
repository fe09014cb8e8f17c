// Shared by the observer's files (nccl_observer_{ops,groups,init,teardown}.cc); not for
// hooks, which use nccl_observer.h.
//
// The guard is written once: BeginObserved decides whether a call is observed, Guarded
// contains an internal failure (ncclwatch switches to pass-through with one warning and the
// job's call goes on untouched).
#ifndef NCCLWATCH_PRELOAD_OBSERVE_NCCL_OBSERVER_INTERNAL_H_
#define NCCLWATCH_PRELOAD_OBSERVE_NCCL_OBSERVER_INTERNAL_H_

#include <nccl.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/shm/record_flags.h"
#include "preload/observe/comm_registry.h"
#include "preload/hooks/keep_errno.h"
#include "preload/observe/record_range.h"
#include "preload/lifecycle/runtime.h"
#include "preload/observe/thread_state.h"

namespace ncclwatch::preload {

inline uint64_t Handle(ncclComm_t comm) { return reinterpret_cast<uint64_t>(comm); }

// Runs `body`; if it throws, disables ncclwatch (the warning names `where`) and returns a
// value-initialised result (false for a Begin*).
template <typename Body>
auto Guarded(const char* where, Body&& body) noexcept {
  using Result = decltype(body());
  try {
    return body();
  } catch (...) {  // the body runs inside an interposed NCCL hook (C ABI): nothing may reach the job
    DisableAfterInternalError(where);
    if constexpr (!std::is_void_v<Result>) return Result{};
  }
}

enum class Activation {
  kIfActive,  // observed only once a communicator made ncclwatch active
  kActivate,  // the call creates a communicator: the first one activates ncclwatch
};

// The start of every observed call. Returns false, having done nothing, when the call must
// only be forwarded: pass-through, inert (kIfActive), or a call NCCL makes from inside a
// hooked one. Otherwise runs `body(runtime, thread)` and counts the thread as inside a
// hooked call until the matching LeaveObserved().
template <typename Body>
bool BeginObserved(Activation activation, const char* where, Body&& body) noexcept {
  if (PassThroughOnly()) return false;
  Runtime* rt = activation == Activation::kActivate ? ActivateForNewCommunicator() : ActiveRuntime();
  if (rt == nullptr) return false;
  return Guarded(where, [&] {
    HookDepths& depths = ThisThreadDepths();
    if (depths.reentry > 0) return false;
    body(rt, ThisThread(rt->generation));
    ++depths.reentry;
    return true;
  });
}

// The start of the outermost end of a group that has work (group_depth.h), after the real
// call: runs `body(runtime, thread)` with errno kept (the group end's hook keeps none,
// nccl_tracking.h), once ncclwatch is active. A communicator created inside the group may have
// activated it meanwhile.
template <typename Body>
void AtOutermostGroupEnd(const char* where, Body&& body) noexcept {
  const KeepErrno keep;
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr || PassThroughOnly()) return;
  Guarded(where, [&] { body(rt, ThisThread(rt->generation)); });
}

// ---- Completion of published records (nccl_observer_ops.cc).
// What follows NCCL's answer for records published before the call: a completion event on
// success, deferral while a nonblocking enqueue is in progress, the failed flag otherwise;
// for each of a group's (communicator, stream) ranges.
void SettleAll(Runtime* rt, const StreamRange* ranges, size_t count, ncclResult_t result);

// ---- Groups (nccl_observer_groups.cc).
// Which outermost group a record belongs to: 1, 2, ... never repeating, taken by the group's
// first op (CommSlot::Append's group_key, which counts a group's collectives on a
// communicator as one launch).
uint64_t NextGroupKey();
// A grouped record's flags: in a group, and the group's serial, 1..65535, wrapping (layout.h,
// kRecordGroupShift).
inline uint32_t GroupedRecordFlags(uint64_t group_key) {
  return shm::kRecordInGroup | shm::RecordGroupBits(static_cast<uint32_t>((group_key - 1) % 0xffffu) + 1);
}
// Records of a grouped op on a (communicator, stream) other than the group's first: added to
// ThreadState::group_ranges.
void AddGroupRange(ThreadState* ts, const StreamRange& records);
// Records of a grouped op join the open group's ranges, settled (or, for a simulated end,
// taken back) at its outermost end. Inline: the first range is the common case, a group on
// one communicator and stream.
inline void JoinGroup(ThreadState* ts, HookDepths* depths, const StreamRange& records) {
  StreamRange& first = ts->group_range;
  if (first.comm == nullptr) {
    first = records;
    if (depths->group_work == GroupWork::kNone) depths->group_work = GroupWork::kOneRange;
  } else if (first.comm == records.comm && first.stream == records.stream) {
    first.range.Extend(records.range);
  } else {
    AddGroupRange(ts, records);
    depths->group_work = GroupWork::kMore;
  }
}
// Records the completion events deferred while `entry`'s enqueue was in progress.
void FlushDeferred(Runtime* rt, CommEntry* entry);

// ---- Communicator creation (nccl_observer_init.cc).
// The communicator finished initialising: publish what it says about itself.
void CompleteInit(Runtime* rt, CommEntry* entry, ncclComm_t comm, bool adopt_rank);
// Neither split nor shrunk: its rank may stand for the process (SegmentHeader::global_rank).
bool IsRootComm(const CommEntry& entry);
// An init issued inside a group, after the outermost GroupEnd returned `result`.
void SettleGroupedInit(Runtime* rt, CommEntry* entry, ncclResult_t result);

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_NCCL_OBSERVER_INTERNAL_H_
