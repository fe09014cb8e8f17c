// ncclGroupStart's tracking: the calling thread's group depth, nothing else. Ops issued inside
// a group are buffered by their own hooks and published at the outermost ncclGroupEnd
// (nccl_observer_groups.cc), so the start has nothing to publish.
//
// Inline and call-free: a group costs three hooked calls (start, op, end), and with the start
// out of line (BeginGroupStart/EndGroupStart in nccl_observer_groups.cc) its two calls, the
// runtime load and the TLS reloads were about 40 of a group's 620 instructions (callgrind;
// issue 23). The depth is counted even while ncclwatch is inert, so that a group opened
// before the first communicator is known.
#ifndef NCCLWATCH_PRELOAD_GROUP_DEPTH_H_
#define NCCLWATCH_PRELOAD_GROUP_DEPTH_H_

#include <nccl.h>

#include "preload/runtime.h"
#include "preload/thread_state.h"

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

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_GROUP_DEPTH_H_
