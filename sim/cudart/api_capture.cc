// Stream capture and graph entry points. Captured work is recorded as graph nodes, never run
// (graph.h); launching a graph enqueues one no-op item.
#include <cuda_runtime_api.h>

#include <utility>
#include <vector>

#include "api_common.h"
#include "call_count.h"
#include "graph.h"

namespace ncclsim {
namespace {

struct GraphExec {
  size_t nodes = 0;
};

cudaError_t BeginCapture(cudaStream_t handle, cudaStreamCaptureMode mode, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
      mode != cudaStreamCaptureModeRelaxed) {
    return cudaErrorInvalidValue;
  }
  return Runtime::Get().BeginCapture(s, mode);
}

cudaError_t EndCapture(cudaStream_t handle, cudaGraph_t* graph, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (graph == nullptr) return cudaErrorInvalidValue;
  Capture ended;
  if (Runtime::Get().EndCapture(s, &ended) != cudaSuccess) return cudaErrorIllegalState;
  std::vector<cudaGraphNode_t> dependencies;
  cudaGraph_t target = nullptr;
  // A capture begun by cudaStreamBeginCaptureToGraph ends in the caller's graph.
  if (!TakeCaptureTarget(s.get(), &target, &dependencies) || Graph::Lookup(target) == nullptr) {
    target = Graph::Create();
  }
  Graph::Lookup(target)->AppendCaptured(ended.nodes, std::move(dependencies));
  *graph = target;
  return cudaSuccess;
}

cudaError_t IsCapturing(cudaStream_t handle, cudaStreamCaptureStatus* status, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (status == nullptr) return cudaErrorInvalidValue;
  if (s->kind() == StreamKind::kLegacy && Runtime::Get().LegacyStreamProhibited()) {
    return cudaErrorStreamCaptureImplicit;
  }
  *status = Runtime::Get().CaptureOf(*s, nullptr) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

cudaError_t CaptureInfo(cudaStream_t handle, cudaStreamCaptureStatus* status, unsigned long long* id,
                        cudaGraph_t* graph, const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges,
                        size_t* num_deps, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (status == nullptr) return cudaErrorInvalidValue;
  if (s->kind() == StreamKind::kLegacy && Runtime::Get().LegacyStreamProhibited()) {
    return cudaErrorStreamCaptureImplicit;
  }
  Capture capture;
  const bool active = Runtime::Get().CaptureOf(*s, &capture);
  *status = active ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  if (id) *id = active ? capture.id : 0;
  // The sim builds no graph while capturing, so there is no graph or dependency set to expose.
  if (graph) *graph = nullptr;
  if (deps) *deps = nullptr;
  if (edges) *edges = nullptr;
  if (num_deps) *num_deps = 0;
  return cudaSuccess;
}

cudaError_t Instantiate(cudaGraphExec_t* exec, cudaGraph_t graph) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (exec == nullptr) return cudaErrorInvalidValue;
  Graph* g = Graph::Lookup(graph);
  if (g == nullptr) return cudaErrorInvalidValue;
  *exec = reinterpret_cast<cudaGraphExec_t>(new GraphExec{g->node_count()});
  return cudaSuccess;
}

cudaError_t Launch(cudaGraphExec_t exec, cudaStream_t handle, DefaultStream ds) {
  if (exec == nullptr) return cudaErrorInvalidValue;
  return LaunchNoOpKernel(handle, ds);
}

}  // namespace
}  // namespace ncclsim

using ncclsim::DefaultStream;
using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode) {
  return Report(ncclsim::BeginCapture(s, mode, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t s, cudaStreamCaptureMode mode) {
  return Report(ncclsim::BeginCapture(s, mode, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph) {
  return Report(ncclsim::EndCapture(s, graph, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t s, cudaGraph_t* graph) {
  return Report(ncclsim::EndCapture(s, graph, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status) {
  ncclsim::CountCall();
  return Report(ncclsim::IsCapturing(s, status, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t s, cudaStreamCaptureStatus* status) {
  ncclsim::CountCall();
  return Report(ncclsim::IsCapturing(s, status, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, cudaStreamCaptureStatus* status,
                                                    unsigned long long* id, cudaGraph_t* graph,
                                                    const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges,
                                                    size_t* num_deps) {
  return Report(ncclsim::CaptureInfo(s, status, id, graph, deps, edges, num_deps, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t s, cudaStreamCaptureStatus* status,
                                                         unsigned long long* id, cudaGraph_t* graph,
                                                         const cudaGraphNode_t** deps,
                                                         const cudaGraphEdgeData** edges, size_t* num_deps) {
  return Report(ncclsim::CaptureInfo(s, status, id, graph, deps, edges, num_deps, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  ncclsim::CountCall();
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  if (mode == nullptr) return Report(cudaErrorInvalidValue);
  *mode = ncclsim::Runtime::ExchangeThreadCaptureMode(*mode);
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  return Report(ncclsim::Instantiate(exec, graph));
}
NCCLSIM_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                         unsigned long long) {
  return Report(ncclsim::Instantiate(exec, graph));
}
NCCLSIM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  return Report(ncclsim::Launch(exec, s, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t s) {
  return Report(ncclsim::Launch(exec, s, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  return Report(ncclsim::Graph::Destroy(graph) ? cudaSuccess : cudaErrorInvalidValue);
}
NCCLSIM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete reinterpret_cast<ncclsim::GraphExec*>(exec);
  return cudaSuccess;
}
