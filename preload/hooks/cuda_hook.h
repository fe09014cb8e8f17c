// The one guard every CUDA hook runs (rows in cuda_api_table.h, trackings in
// cuda_tracking.h): forward to the real function, and let the tracking look at the call
// before and after. Which function is real is the caller's business (hooks_cuda.cc): the next
// definition for an exported hook, the function a lookup found for a bound one.
#ifndef NCCLWATCH_PRELOAD_HOOKS_CUDA_HOOK_H_
#define NCCLWATCH_PRELOAD_HOOKS_CUDA_HOOK_H_

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "preload/hooks/cuda_tracking.h"
#include "preload/hooks/keep_errno.h"

namespace ncclwatch::preload {

// What an exported hook returns when the library behind it lacks the function (never a call
// through NULL).
inline constexpr cudaError_t kCudartMissing = cudaErrorSharedObjectSymbolNotFound;
inline constexpr CUresult kDriverMissing = CUDA_ERROR_NOT_FOUND;

template <typename Result, typename Tracking, typename Call>
Result ObserveCuda(Tracking tracking, Call&& call) {
  if (!tracking.Begin()) return call();
  const Result result = call();
  const KeepErrno keep;
  tracking.End(result);
  return result;
}

}  // namespace ncclwatch::preload

// A row's parameters and arguments with the real function in front: `(void* real_fn,
// CUstream stream)` and `(real_fn, stream)`; `()` gives `(void* real_fn)`.
#define NCCLWATCH_CUDA_PARAMS_WITH_REAL(...) (void* real_fn __VA_OPT__(, ) __VA_ARGS__)
#define NCCLWATCH_CUDA_ARGS_WITH_REAL(...) (real_fn __VA_OPT__(, ) __VA_ARGS__)

// The body of the row `name`: calls `real_fn`, of the row's type, under the row's tracking.
#define NCCLWATCH_CUDA_HOOK_BODY(result, params, args, track)                                 \
  using namespace ::ncclwatch::preload;                                                      \
  using Fn = result params;                                                                  \
  Fn* const real = reinterpret_cast<Fn*>(real_fn);                                           \
  return ObserveCuda<result>(track, [&] { return real args; })

#endif  // NCCLWATCH_PRELOAD_HOOKS_CUDA_HOOK_H_
