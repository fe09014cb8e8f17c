// The one guard every NCCL hook runs (the tracking kinds are in nccl_tracking.h):
// find the real function of the right library, forward to it, and let the tracking look
// at the call before and after, with errno kept and the creating library remembered.
#ifndef NCCLWATCH_PRELOAD_HOOKS_NCCL_HOOK_H_
#define NCCLWATCH_PRELOAD_HOOKS_NCCL_HOOK_H_

#include <nccl.h>

#include <type_traits>

#include "preload/hooks/keep_errno.h"
#include "preload/real/nccl_real.h"
#include "preload/hooks/nccl_tracking.h"

namespace ncclwatch::preload {

// A tracking whose Begin and End leave errno alone by themselves (the group ends' depth
// count: TLS counters, with errno kept inside the rare calls that do more) declares
// `static constexpr bool kKeepsErrno = true`, and its hook skips the two saves and restores:
// about 2 ns of each group's two extra hooks.
template <typename Tracking>
inline constexpr bool kTrackingKeepsErrno = requires { requires Tracking::kKeepsErrno; };

template <typename Tracking, typename Call>
ncclResult_t Observe(Tracking& tracking, int slot, Call&& call) {
  if constexpr (kTrackingKeepsErrno<Tracking>) {
    // This path remembers no library: a tracking that can create communicators keeps errno here.
    static_assert(std::is_base_of_v<tracking::NoNewComms, Tracking>);
    const bool observing = tracking.Begin();
    const ncclResult_t result = call();
    if (observing) tracking.End(result);
    return result;
  } else {
    int* const job_errno = ThreadErrno();
    bool observing;
    {
      const KeepErrno keep(job_errno);
      observing = tracking.Begin();
    }
    const ncclResult_t result = call();
    const KeepErrno keep(job_errno);
    // Remembered first: the tracking asks the new communicator about itself.
    if (result == ncclSuccess || result == ncclInProgress) {
      const tracking::NewComms created = tracking.Created();
      for (int i = 0; i < created.count; ++i) RememberCommLibrary(created.comms[i], slot);
    }
    if (observing) tracking.End(result);
    return result;
  }
}

}  // namespace ncclwatch::preload

// The body of the hook `name` for library slot `slot` (0: the global scope).
#define NCCLWATCH_NCCL_HOOK_BODY(name, params, args, track, slot)                                     \
  using namespace ::ncclwatch::preload::tracking;                                                    \
  auto tracking = track;                                                                             \
  using Fn = ncclResult_t params;                                                                    \
  auto* const real = reinterpret_cast<Fn*>(::ncclwatch::preload::RealNccl(                           \
      ::ncclwatch::preload::NcclApi::name, slot, tracking.Comm(), __builtin_return_address(0)));     \
  if (real == nullptr) return ncclSystemError;                                                       \
  return ::ncclwatch::preload::Observe(tracking, slot, [&] { return real args; })

#endif  // NCCLWATCH_PRELOAD_HOOKS_NCCL_HOOK_H_
