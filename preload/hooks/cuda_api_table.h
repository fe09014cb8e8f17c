// Every CUDA runtime and driver entry point the preload hooks, once. Adding one is a row:
//
//   X(kind, library, result, name, (parameters), (arguments), missing, tracking)
//
// kind:     sync (a host sync: hot, the thread is published as blocked), capture (a call
//           that begins or ends a stream capture, capture_watch.h), lookup (an entry-point
//           lookup: cuGetProcAddress and cudaGetDriverEntryPoint*, whose answer for a function
//           of this table is our hook of it, cuda_hooks.h), graph or graph_launch (the graph
//           rows at the end);
// library:  kCudart or kDriver (resolver.h);
// missing:  what the hook returns when that library lacks the function;
// tracking: an expression building the tracking from the parameters (cuda_tracking.h).
// A function without parameters is written `()`, never `(void)`: the table splices the real
// function in front of the parameters (hooks_cuda.cc).
//
// Exported unversioned, so they interpose libcudart's versioned (@@libcudart.so.13)
// references too. cuda.h maps some names to their _v2/_ptsz forms by macro; each exported
// name is hooked under its own name (the macros are undone where the table is expanded).
// Every row is also handed out by name: dlsym of the name, and for the driver's rows the
// entry-point lookups of their base name ("cuStreamSynchronize" for cuStreamSynchronize_ptsz),
// each a hook bound to the very function the lookup found (cuda_hooks.h).
// cuStreamBeginCapture is the CUDA 10.0 ABI, whose only argument was the stream: the mode
// register is forwarded as it came, and the real function ignores it. cuGetProcAddress is
// the CUDA 11.3 ABI (no symbolStatus), cuCtxSynchronize_v2 the CUDA 13.0 one (a context).
//
// Not hooked: cudaThreadExchangeStreamCaptureMode and its driver twin. A thread's capture
// mode decides which calls are illegal during a capture, not whether one is in progress,
// and while one is, every op asks CUDA anyway (the tracker's own thread runs in
// cudaStreamCaptureModeThreadLocal, tracker.h).
#ifndef NCCLWATCH_PRELOAD_HOOKS_CUDA_API_TABLE_H_
#define NCCLWATCH_PRELOAD_HOOKS_CUDA_API_TABLE_H_

#define NCCLWATCH_CUDA_RT_BEGIN_CAPTURE(X, name, ptsz)                                                   \
  X(capture, kCudart, cudaError_t, name, (cudaStream_t stream, cudaStreamCaptureMode mode), (stream, mode), \
    kCudartMissing, cuda_tracking::CaptureBegin<cudaError_t>({CaptureKey(stream, ptsz), cudaSuccess}))
#define NCCLWATCH_CUDA_RT_BEGIN_CAPTURE_TO_GRAPH(X, name, ptsz)                                           \
  X(capture, kCudart, cudaError_t, name,                                                                  \
    (cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* deps, const cudaGraphEdgeData* edges,  \
     size_t count, cudaStreamCaptureMode mode), (stream, graph, deps, edges, count, mode),                 \
    kCudartMissing, cuda_tracking::CaptureBegin<cudaError_t>({CaptureKey(stream, ptsz), cudaSuccess}))
#define NCCLWATCH_CUDA_RT_END_CAPTURE(X, name, ptsz)                                                     \
  X(capture, kCudart, cudaError_t, name, (cudaStream_t stream, cudaGraph_t * graph), (stream, graph),    \
    kCudartMissing, cuda_tracking::CaptureEnd<cudaError_t>(                                               \
        {CaptureKey(stream, ptsz), cudaSuccess, cudaErrorStreamCaptureInvalidated}))
#define NCCLWATCH_CUDA_DRV_BEGIN_CAPTURE(X, name, ptsz)                                                  \
  X(capture, kDriver, CUresult, name, (CUstream stream, CUstreamCaptureMode mode), (stream, mode),         \
    kDriverMissing, cuda_tracking::CaptureBegin<CUresult>({CaptureKey(stream, ptsz), CUDA_SUCCESS}))
#define NCCLWATCH_CUDA_DRV_BEGIN_CAPTURE_TO_GRAPH(X, name, ptsz)                                          \
  X(capture, kDriver, CUresult, name,                                                                     \
    (CUstream stream, CUgraph graph, const CUgraphNode* deps, const CUgraphEdgeData* edges, size_t count,  \
     CUstreamCaptureMode mode), (stream, graph, deps, edges, count, mode),                                 \
    kDriverMissing, cuda_tracking::CaptureBegin<CUresult>({CaptureKey(stream, ptsz), CUDA_SUCCESS}))
#define NCCLWATCH_CUDA_DRV_END_CAPTURE(X, name, ptsz)                                                    \
  X(capture, kDriver, CUresult, name, (CUstream stream, CUgraph * graph), (stream, graph), kDriverMissing, \
    cuda_tracking::CaptureEnd<CUresult>(                                                                  \
        {CaptureKey(stream, ptsz), CUDA_SUCCESS, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED}))

#define NCCLWATCH_CUDA_RT_SYNC(X, name, params, args, kind, target)                                     \
  X(sync, kCudart, cudaError_t, name, params, args, kCudartMissing,                                       \
    cuda_tracking::Sync({::ncclwatch::shm::SyncKind::kind, ::ncclwatch::shm::SyncApi::kRuntime, target}))
#define NCCLWATCH_CUDA_DRV_SYNC(X, name, params, args, kind, target)                                     \
  X(sync, kDriver, CUresult, name, params, args, kDriverMissing,                                          \
    cuda_tracking::Sync({::ncclwatch::shm::SyncKind::kind, ::ncclwatch::shm::SyncApi::kDriver, target}))
#define NCCLWATCH_CUDA_RT_ENTRY_POINT(X, name)                                                            \
  X(lookup, kCudart, cudaError_t, name,                                                                   \
    (const char* symbol, void** function, unsigned long long flags, cudaDriverEntryPointQueryResult* status), \
    (symbol, function, flags, status), kCudartMissing,                                                    \
    cuda_tracking::EntryPointLookup<cudaError_t>({symbol, function, cudaSuccess}))
#define NCCLWATCH_CUDA_RT_ENTRY_POINT_BY_VERSION(X, name)                                                 \
  X(lookup, kCudart, cudaError_t, name,                                                                   \
    (const char* symbol, void** function, unsigned int version, unsigned long long flags,                 \
     cudaDriverEntryPointQueryResult* status), (symbol, function, version, flags, status), kCudartMissing,  \
    cuda_tracking::EntryPointLookup<cudaError_t>({symbol, function, cudaSuccess}))

#define NCCLWATCH_CUDA_API(X)                                                                            \
  NCCLWATCH_CUDA_RT_SYNC(X, cudaStreamSynchronize, (cudaStream_t stream), (stream), kStream, stream)        \
  NCCLWATCH_CUDA_RT_SYNC(X, cudaStreamSynchronize_ptsz, (cudaStream_t stream), (stream), kStream, stream)   \
  NCCLWATCH_CUDA_RT_SYNC(X, cudaDeviceSynchronize, (), (), kDevice, nullptr)                                \
  NCCLWATCH_CUDA_RT_SYNC(X, cudaEventSynchronize, (cudaEvent_t event), (event), kEvent, event)              \
  NCCLWATCH_CUDA_DRV_SYNC(X, cuStreamSynchronize, (CUstream stream), (stream), kStream, stream)             \
  NCCLWATCH_CUDA_DRV_SYNC(X, cuStreamSynchronize_ptsz, (CUstream stream), (stream), kStream, stream)        \
  NCCLWATCH_CUDA_DRV_SYNC(X, cuEventSynchronize, (CUevent event), (event), kEvent, event)                   \
  NCCLWATCH_CUDA_DRV_SYNC(X, cuCtxSynchronize, (), (), kDevice, nullptr)                                    \
  NCCLWATCH_CUDA_DRV_SYNC(X, cuCtxSynchronize_v2, (CUcontext context), (context), kDevice, nullptr)         \
  NCCLWATCH_CUDA_RT_BEGIN_CAPTURE(X, cudaStreamBeginCapture, false)                                       \
  NCCLWATCH_CUDA_RT_BEGIN_CAPTURE(X, cudaStreamBeginCapture_ptsz, true)                                   \
  NCCLWATCH_CUDA_RT_BEGIN_CAPTURE_TO_GRAPH(X, cudaStreamBeginCaptureToGraph, false)                       \
  NCCLWATCH_CUDA_RT_BEGIN_CAPTURE_TO_GRAPH(X, cudaStreamBeginCaptureToGraph_ptsz, true)                   \
  NCCLWATCH_CUDA_RT_END_CAPTURE(X, cudaStreamEndCapture, false)                                           \
  NCCLWATCH_CUDA_RT_END_CAPTURE(X, cudaStreamEndCapture_ptsz, true)                                       \
  NCCLWATCH_CUDA_DRV_BEGIN_CAPTURE(X, cuStreamBeginCapture, false)                                        \
  NCCLWATCH_CUDA_DRV_BEGIN_CAPTURE(X, cuStreamBeginCapture_ptsz, true)                                    \
  NCCLWATCH_CUDA_DRV_BEGIN_CAPTURE(X, cuStreamBeginCapture_v2, false)                                     \
  NCCLWATCH_CUDA_DRV_BEGIN_CAPTURE(X, cuStreamBeginCapture_v2_ptsz, true)                                 \
  NCCLWATCH_CUDA_DRV_BEGIN_CAPTURE_TO_GRAPH(X, cuStreamBeginCaptureToGraph, false)                        \
  NCCLWATCH_CUDA_DRV_BEGIN_CAPTURE_TO_GRAPH(X, cuStreamBeginCaptureToGraph_ptsz, true)                    \
  NCCLWATCH_CUDA_DRV_END_CAPTURE(X, cuStreamEndCapture, false)                                            \
  NCCLWATCH_CUDA_DRV_END_CAPTURE(X, cuStreamEndCapture_ptsz, true)                                        \
  X(lookup, kDriver, CUresult, cuGetProcAddress,                                                          \
    (const char* symbol, void** function, int version, cuuint64_t flags), (symbol, function, version, flags), \
    kDriverMissing, cuda_tracking::EntryPointLookup<CUresult>({symbol, function, CUDA_SUCCESS}))           \
  X(lookup, kDriver, CUresult, cuGetProcAddress_v2,                                                       \
    (const char* symbol, void** function, int version, cuuint64_t flags,                                  \
     CUdriverProcAddressQueryResult* status), (symbol, function, version, flags, status), kDriverMissing,   \
    cuda_tracking::EntryPointLookup<CUresult>({symbol, function, CUDA_SUCCESS}))                           \
  NCCLWATCH_CUDA_RT_ENTRY_POINT(X, cudaGetDriverEntryPoint)                                               \
  NCCLWATCH_CUDA_RT_ENTRY_POINT(X, cudaGetDriverEntryPoint_ptsz)                                          \
  NCCLWATCH_CUDA_RT_ENTRY_POINT_BY_VERSION(X, cudaGetDriverEntryPointByVersion)                           \
  NCCLWATCH_CUDA_RT_ENTRY_POINT_BY_VERSION(X, cudaGetDriverEntryPointByVersion_ptsz)                      \
  NCCLWATCH_CUDA_GRAPH_API(X)

// CUDA graphs (graph rows, observe/graph_observer.h): which executable graph replays which
// captured NCCL ops, and each launch of one. Kinds: graph_launch (on the step's path, like a
// sync) and graph (instantiation and destruction, rare). Every exported form since CUDA 11.0 of
// the runtime's and the driver's calls (cuGraphInstantiate and _v2 keep the 11.x ABI; cuda.h maps
// the plain names of CUDA 12 to WithFlags and ExecUpdate_v2). Two runtime calls changed their
// arguments in CUDA 12.0 under the same unversioned name, which our export also interposes in a
// CUDA 11 runtime: cudaGraphInstantiate (error node, log, log size before; flags since) and
// cudaGraphExecUpdate (error node and result before; a result info since). Their hooks take
// the wider form and forward every argument register as it came, so either ABI reaches the real
// function intact; the hook reads only the executable graph and the graph, the first two in
// both. The instantiation's success code decides; an update re-reads what the executable graph
// replays.
#define NCCLWATCH_CUDA_RT_GRAPH_INSTANTIATE(X, name, extra_type)                                           \
  X(graph, kCudart, cudaError_t, name, (cudaGraphExec_t * exec, cudaGraph_t graph, extra_type extra),      \
    (exec, graph, extra), kCudartMissing,                                                                  \
    (cuda_tracking::GraphInstantiate<cudaError_t, cudaGraphExec_t>{exec, graph, cudaSuccess}))
#define NCCLWATCH_CUDA_DRV_GRAPH_INSTANTIATE(X, name, extra_type)                                          \
  X(graph, kDriver, CUresult, name, (CUgraphExec * exec, CUgraph graph, extra_type extra), (exec, graph, extra), \
    kDriverMissing, (cuda_tracking::GraphInstantiate<CUresult, CUgraphExec>{exec, graph, CUDA_SUCCESS}))
#define NCCLWATCH_CUDA_DRV_GRAPH_INSTANTIATE_WITH_LOG(X, name)                                             \
  X(graph, kDriver, CUresult, name,                                                                       \
    (CUgraphExec * exec, CUgraph graph, CUgraphNode * error_node, char* log, size_t log_size),             \
    (exec, graph, error_node, log, log_size), kDriverMissing,                                             \
    (cuda_tracking::GraphInstantiate<CUresult, CUgraphExec>{exec, graph, CUDA_SUCCESS}))
#define NCCLWATCH_CUDA_RT_GRAPH_LAUNCH(X, name, ptsz)                                                      \
  X(graph_launch, kCudart, cudaError_t, name, (cudaGraphExec_t exec, cudaStream_t stream), (exec, stream), \
    kCudartMissing, (cuda_tracking::GraphLaunch<cudaError_t>{exec, stream, ptsz, cudaSuccess, {}}))
#define NCCLWATCH_CUDA_DRV_GRAPH_LAUNCH(X, name, ptsz)                                                     \
  X(graph_launch, kDriver, CUresult, name, (CUgraphExec exec, CUstream stream), (exec, stream), kDriverMissing, \
    (cuda_tracking::GraphLaunch<CUresult>{exec, stream, ptsz, CUDA_SUCCESS, {}}))

#define NCCLWATCH_CUDA_GRAPH_API(X)                                                                        \
  X(graph, kCudart, cudaError_t, cudaGraphInstantiate,                                                    \
    (cudaGraphExec_t * exec, cudaGraph_t graph, void* flags_or_error_node, char* log, size_t log_size),    \
    (exec, graph, flags_or_error_node, log, log_size), kCudartMissing,                                    \
    (cuda_tracking::GraphInstantiate<cudaError_t, cudaGraphExec_t>{exec, graph, cudaSuccess}))             \
  NCCLWATCH_CUDA_RT_GRAPH_INSTANTIATE(X, cudaGraphInstantiateWithFlags, unsigned long long)                \
  NCCLWATCH_CUDA_RT_GRAPH_INSTANTIATE(X, cudaGraphInstantiateWithParams, cudaGraphInstantiateParams*)      \
  NCCLWATCH_CUDA_RT_GRAPH_INSTANTIATE(X, cudaGraphInstantiateWithParams_ptsz, cudaGraphInstantiateParams*) \
  X(graph, kCudart, cudaError_t, cudaGraphExecUpdate,                                                     \
    (cudaGraphExec_t exec, cudaGraph_t graph, void* info_or_error_node, void* result),                     \
    (exec, graph, info_or_error_node, result), kCudartMissing,                                             \
    (cuda_tracking::GraphInstantiate<cudaError_t, cudaGraphExec_t>{&exec, graph, cudaSuccess}))            \
  X(graph, kCudart, cudaError_t, cudaGraphExecDestroy, (cudaGraphExec_t exec), (exec), kCudartMissing,    \
    (cuda_tracking::GraphDestroy<cudaError_t>{exec, true, cudaSuccess}))                                  \
  X(graph, kCudart, cudaError_t, cudaGraphDestroy, (cudaGraph_t graph), (graph), kCudartMissing,          \
    (cuda_tracking::GraphDestroy<cudaError_t>{graph, false, cudaSuccess}))                                \
  NCCLWATCH_CUDA_RT_GRAPH_LAUNCH(X, cudaGraphLaunch, false)                                               \
  NCCLWATCH_CUDA_RT_GRAPH_LAUNCH(X, cudaGraphLaunch_ptsz, true)                                           \
  NCCLWATCH_CUDA_DRV_GRAPH_INSTANTIATE_WITH_LOG(X, cuGraphInstantiate)                                    \
  NCCLWATCH_CUDA_DRV_GRAPH_INSTANTIATE_WITH_LOG(X, cuGraphInstantiate_v2)                                 \
  NCCLWATCH_CUDA_DRV_GRAPH_INSTANTIATE(X, cuGraphInstantiateWithFlags, unsigned long long)                \
  NCCLWATCH_CUDA_DRV_GRAPH_INSTANTIATE(X, cuGraphInstantiateWithParams, CUDA_GRAPH_INSTANTIATE_PARAMS*)   \
  NCCLWATCH_CUDA_DRV_GRAPH_INSTANTIATE(X, cuGraphInstantiateWithParams_ptsz, CUDA_GRAPH_INSTANTIATE_PARAMS*) \
  X(graph, kDriver, CUresult, cuGraphExecUpdate,                                                          \
    (CUgraphExec exec, CUgraph graph, CUgraphNode * error_node, CUgraphExecUpdateResult * result),        \
    (exec, graph, error_node, result), kDriverMissing,                                                    \
    (cuda_tracking::GraphInstantiate<CUresult, CUgraphExec>{&exec, graph, CUDA_SUCCESS}))                 \
  X(graph, kDriver, CUresult, cuGraphExecUpdate_v2,                                                       \
    (CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo * info), (exec, graph, info),           \
    kDriverMissing, (cuda_tracking::GraphInstantiate<CUresult, CUgraphExec>{&exec, graph, CUDA_SUCCESS})) \
  X(graph, kDriver, CUresult, cuGraphExecDestroy, (CUgraphExec exec), (exec), kDriverMissing,             \
    (cuda_tracking::GraphDestroy<CUresult>{exec, true, CUDA_SUCCESS}))                                    \
  X(graph, kDriver, CUresult, cuGraphDestroy, (CUgraph graph), (graph), kDriverMissing,                   \
    (cuda_tracking::GraphDestroy<CUresult>{graph, false, CUDA_SUCCESS}))                                  \
  NCCLWATCH_CUDA_DRV_GRAPH_LAUNCH(X, cuGraphLaunch, false)                                                \
  NCCLWATCH_CUDA_DRV_GRAPH_LAUNCH(X, cuGraphLaunch_ptsz, true)

#endif  // NCCLWATCH_PRELOAD_HOOKS_CUDA_API_TABLE_H_
