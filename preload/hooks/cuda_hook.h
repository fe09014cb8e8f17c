// The one guard every CUDA hook runs (rows in cuda_api_table.h, trackings in
// cuda_tracking.h): find the next definition once, forward to it, and let the tracking look
// at the call before and after. A missing real function returns the API's own "not found"
// code, never a call through NULL.
#ifndef NCCLWATCH_PRELOAD_HOOKS_CUDA_HOOK_H_
#define NCCLWATCH_PRELOAD_HOOKS_CUDA_HOOK_H_

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "preload/hooks/cuda_tracking.h"
#include "preload/hooks/keep_errno.h"

namespace ncclwatch::preload {

// What a hook returns when the library behind it lacks the function.
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

// The body of the hook `name` of `library` (Library::kCudart or kDriver).
#define NCCLWATCH_CUDA_HOOK_BODY(library, result, name, params, args, missing, track)                  \
  using namespace ::ncclwatch::preload;                                                               \
  using Fn = result params;                                                                           \
  static NextFunction<Fn> next_##name(Library::library, #name);                                       \
  Fn* const real = next_##name.Get(__builtin_return_address(0));                                      \
  if (real == nullptr) return missing;                                                                \
  return ObserveCuda<result>(track, [&] { return real args; })

#endif  // NCCLWATCH_PRELOAD_HOOKS_CUDA_HOOK_H_
