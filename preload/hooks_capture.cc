// Hooks for the calls that begin and end a stream capture, runtime and driver: they keep
// capture_watch.h's table of capturing streams, so that ops need not ask CUDA whether their
// stream captures. Each forwards its arguments untouched and returns the real result; the
// bookkeeping is a few atomics and never changes errno or CUDA's last error.
//
// cudaThreadExchangeStreamCaptureMode / cuThreadExchangeStreamCaptureMode are not hooked: a
// thread's capture mode decides which calls are illegal during a capture, not whether one is
// in progress, and while one is the tracker asks about every op anyway (its own thread runs
// in cudaStreamCaptureModeThreadLocal, see tracker.h).
//
// cuda.h maps cuStreamBeginCapture to cuStreamBeginCapture_v2 (and to _ptsz variants) by
// macro; each exported name is hooked under its own name, with its own signature.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "preload/capture_watch.h"
#include "preload/hook_macros.h"
#include "preload/keep_errno.h"

#undef cuStreamBeginCapture
#undef cuStreamBeginCaptureToGraph
#undef cuStreamEndCapture
#undef cudaStreamBeginCapture
#undef cudaStreamBeginCaptureToGraph
#undef cudaStreamEndCapture

namespace {

using ncclwatch::preload::CaptureKey;
using ncclwatch::preload::Library;
using ncclwatch::preload::NextFunction;

using RtBegin = cudaError_t(cudaStream_t, cudaStreamCaptureMode);
using RtBeginToGraph = cudaError_t(cudaStream_t, cudaGraph_t, const cudaGraphNode_t*, const cudaGraphEdgeData*,
                                   size_t, cudaStreamCaptureMode);
using RtEnd = cudaError_t(cudaStream_t, cudaGraph_t*);
using DrvBegin = CUresult(CUstream, CUstreamCaptureMode);
using DrvBeginToGraph = CUresult(CUstream, CUgraph, const CUgraphNode*, const CUgraphEdgeData*, size_t,
                                 CUstreamCaptureMode);
using DrvEnd = CUresult(CUstream, CUgraph*);

// `real` is the next definition (null: `missing`); `ok` tells whether a result began a capture.
template <typename Result, typename Fn, typename Call>
Result Begin(uint64_t key, Fn* real, Result missing, Result ok, Call&& call) {
  if (real == nullptr) return missing;
  ncclwatch::preload::CaptureBeginning(key);
  const Result result = call(real);
  const ncclwatch::preload::KeepErrno keep;
  ncclwatch::preload::CaptureBegun(key, result == ok);
  return result;
}

// The capture is over when the end succeeded or reported it invalidated (901 in both APIs).
template <typename Result, typename Fn, typename Call>
Result End(uint64_t key, Fn* real, Result missing, Result ok, Result invalidated, Call&& call) {
  if (real == nullptr) return missing;
  const Result result = call(real);
  const ncclwatch::preload::KeepErrno keep;
  if (result == ok || result == invalidated) ncclwatch::preload::CaptureEnded(key);
  return result;
}

constexpr cudaError_t kRtMissing = cudaErrorSharedObjectSymbolNotFound;
constexpr CUresult kDrvMissing = CUDA_ERROR_NOT_FOUND;

}  // namespace

#define NCCLWATCH_CAPTURE_NEXT(library, type, name) \
  static NextFunction<type> next_##name(library, #name); \
  type* const real = next_##name.Get(__builtin_return_address(0))

#define NCCLWATCH_RT_BEGIN(name, ptsz)                                                                    \
  NCCLWATCH_EXPORT cudaError_t name(cudaStream_t stream, cudaStreamCaptureMode mode) {                 \
    NCCLWATCH_CAPTURE_NEXT(Library::kCudart, RtBegin, name);                                              \
    return Begin(CaptureKey(stream, ptsz), real, kRtMissing, cudaSuccess, [&](RtBegin* f) { return f(stream, mode); }); \
  }
#define NCCLWATCH_RT_BEGIN_TO_GRAPH(name, ptsz)                                                            \
  NCCLWATCH_EXPORT cudaError_t name(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* deps,    \
                                    const cudaGraphEdgeData* edges, size_t count, cudaStreamCaptureMode mode) { \
    NCCLWATCH_CAPTURE_NEXT(Library::kCudart, RtBeginToGraph, name);                                       \
    return Begin(CaptureKey(stream, ptsz), real, kRtMissing, cudaSuccess,                                 \
                 [&](RtBeginToGraph* f) { return f(stream, graph, deps, edges, count, mode); });           \
  }
#define NCCLWATCH_RT_END(name, ptsz)                                                                      \
  NCCLWATCH_EXPORT cudaError_t name(cudaStream_t stream, cudaGraph_t* graph) {                           \
    NCCLWATCH_CAPTURE_NEXT(Library::kCudart, RtEnd, name);                                                \
    return End(CaptureKey(stream, ptsz), real, kRtMissing, cudaSuccess, cudaErrorStreamCaptureInvalidated, \
               [&](RtEnd* f) { return f(stream, graph); });                                               \
  }
#define NCCLWATCH_DRV_BEGIN(name, ptsz)                                                                   \
  NCCLWATCH_EXPORT CUresult name(CUstream stream, CUstreamCaptureMode mode) {                            \
    NCCLWATCH_CAPTURE_NEXT(Library::kDriver, DrvBegin, name);                                             \
    return Begin(CaptureKey(stream, ptsz), real, kDrvMissing, CUDA_SUCCESS,                               \
                 [&](DrvBegin* f) { return f(stream, mode); });                                           \
  }
#define NCCLWATCH_DRV_BEGIN_TO_GRAPH(name, ptsz)                                                           \
  NCCLWATCH_EXPORT CUresult name(CUstream stream, CUgraph graph, const CUgraphNode* deps,                  \
                                 const CUgraphEdgeData* edges, size_t count, CUstreamCaptureMode mode) {  \
    NCCLWATCH_CAPTURE_NEXT(Library::kDriver, DrvBeginToGraph, name);                                      \
    return Begin(CaptureKey(stream, ptsz), real, kDrvMissing, CUDA_SUCCESS,                               \
                 [&](DrvBeginToGraph* f) { return f(stream, graph, deps, edges, count, mode); });          \
  }
#define NCCLWATCH_DRV_END(name, ptsz)                                                                     \
  NCCLWATCH_EXPORT CUresult name(CUstream stream, CUgraph* graph) {                                      \
    NCCLWATCH_CAPTURE_NEXT(Library::kDriver, DrvEnd, name);                                               \
    return End(CaptureKey(stream, ptsz), real, kDrvMissing, CUDA_SUCCESS,                                 \
               CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, [&](DrvEnd* f) { return f(stream, graph); });        \
  }

NCCLWATCH_RT_BEGIN(cudaStreamBeginCapture, false)
NCCLWATCH_RT_BEGIN(cudaStreamBeginCapture_ptsz, true)
NCCLWATCH_RT_BEGIN_TO_GRAPH(cudaStreamBeginCaptureToGraph, false)
NCCLWATCH_RT_BEGIN_TO_GRAPH(cudaStreamBeginCaptureToGraph_ptsz, true)
NCCLWATCH_RT_END(cudaStreamEndCapture, false)
NCCLWATCH_RT_END(cudaStreamEndCapture_ptsz, true)
// cuStreamBeginCapture is the CUDA 10.0 ABI, whose only argument was the stream: the mode
// register is forwarded as it came, and the real function ignores it.
NCCLWATCH_DRV_BEGIN(cuStreamBeginCapture, false)
NCCLWATCH_DRV_BEGIN(cuStreamBeginCapture_ptsz, true)
NCCLWATCH_DRV_BEGIN(cuStreamBeginCapture_v2, false)
NCCLWATCH_DRV_BEGIN(cuStreamBeginCapture_v2_ptsz, true)
NCCLWATCH_DRV_BEGIN_TO_GRAPH(cuStreamBeginCaptureToGraph, false)
NCCLWATCH_DRV_BEGIN_TO_GRAPH(cuStreamBeginCaptureToGraph_ptsz, true)
NCCLWATCH_DRV_END(cuStreamEndCapture, false)
NCCLWATCH_DRV_END(cuStreamEndCapture_ptsz, true)
