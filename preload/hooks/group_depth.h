// The tracking of ncclGroupStart and of the group's ends: the calling thread's group depth.
// Ops issued inside a group publish their own records (BeginOp, nccl_observer_ops.cc), so the
// start has nothing to publish and an end only settles what its group published.
//
// Inline and call-free in the common case: a group costs three hooked calls (start, op, end).
// Out of line, the start's two calls, the runtime load and the TLS reloads were about 40 of a
// group's 620 instructions (callgrind), and the end's calls and thread-state lookups about
// 30 ns with nothing to settle. The depth is counted even while ncclwatch is
// inert, so that a group opened before the first communicator is known.
#ifndef NCCLWATCH_PRELOAD_HOOKS_GROUP_DEPTH_H_
#define NCCLWATCH_PRELOAD_HOOKS_GROUP_DEPTH_H_

#include <nccl.h>

#include "preload/observe/nccl_observer.h"
#include "preload/lifecycle/runtime.h"
#include "preload/observe/thread_state.h"

namespace ncclwatch::preload {

// False when the call is only forwarded: pass-through, or a call NCCL makes from inside a
// hooked one. Otherwise EnterGroupStart's matching LeaveGroupStart must follow the real call.
inline bool EnterGroupStart() noexcept {
  if (PassThroughOnly()) return false;
  HookDepths& depths = ThisThreadDepths();
  if (depths.reentry > 0) return false;
  ++depths.reentry;
  return true;
}

inline void LeaveGroupStart(ncclResult_t result) noexcept {
  HookDepths& depths = ThisThreadDepths();
  --depths.reentry;
  if (result == ncclSuccess) ++depths.group;
}

// ncclGroupEnd and ncclGroupSimulateEnd: as EnterGroupStart; `*outermost` tells the leave
// whether this end closes the thread's outermost group.
inline bool EnterGroupEnd(bool* outermost) noexcept {
  if (PassThroughOnly()) return false;
  HookDepths& depths = ThisThreadDepths();
  if (depths.reentry > 0) return false;
  ++depths.reentry;
  *outermost = depths.group == 1;
  return true;
}

// After the real end. NCCL leaves the group level even when the end fails. The outermost end
// settles what the group published, if anything: a launched group on one communicator and
// stream with SettleGroupRange (one completion event), anything else with EndOutermostGroup.
inline void LeaveGroupEnd(GroupEndKind kind, bool outermost, ncclResult_t result) noexcept {
  HookDepths& depths = ThisThreadDepths();
  --depths.reentry;
  if (depths.group > 0) --depths.group;
  if (!outermost) return;
  depths.group_key = 0;
  const GroupWork work = depths.group_work;
  if (work == GroupWork::kNone) return;
  depths.group_work = GroupWork::kNone;
  if (work == GroupWork::kOneRange && kind == GroupEndKind::kLaunch) [[likely]] {
    SettleGroupRange(result);
  } else {
    EndOutermostGroup(kind, result);
  }
}

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_HOOKS_GROUP_DEPTH_H_
