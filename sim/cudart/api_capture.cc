// Stream capture entry points (the rules are capture.h's).
#include <cuda_runtime_api.h>

#include "api_common.h"
#include "call_count.h"
#include "capture.h"

namespace ncclsim {
namespace {

bool ValidMode(cudaStreamCaptureMode mode) {
  return mode == cudaStreamCaptureModeGlobal || mode == cudaStreamCaptureModeThreadLocal ||
         mode == cudaStreamCaptureModeRelaxed;
}

cudaError_t Begin(cudaStream_t handle, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                  cudaStreamCaptureMode mode, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (!ValidMode(mode) || (count != 0 && deps == nullptr)) return cudaErrorInvalidValue;
  if (graph != nullptr) {
    Graph* g = Graph::Lookup(graph);
    if (g == nullptr) return cudaErrorInvalidValue;
    for (size_t i = 0; i < count; ++i) {
      if (!g->Owns(deps[i])) return cudaErrorInvalidValue;
    }
  }
  return Captures::Get().Begin(s, mode, graph, deps, graph != nullptr ? count : 0);
}

cudaError_t End(cudaStream_t handle, cudaGraph_t* graph, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (graph == nullptr) return cudaErrorInvalidValue;
  return Captures::Get().End(*s, graph);
}

cudaError_t Info(cudaStream_t handle, cudaStreamCaptureStatus* status, unsigned long long* id, cudaGraph_t* graph,
                 const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges, size_t* num_deps, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (status == nullptr || (edges != nullptr && deps == nullptr)) return cudaErrorInvalidValue;
  CaptureInfo info;
  if (cudaError_t e = Captures::Get().Query(*s, &info); e != cudaSuccess) return e;
  *status = info.status;
  // Valid data beyond the status only while the capture is active, as CUDA documents.
  if (info.status != cudaStreamCaptureStatusActive) return cudaSuccess;
  if (id) *id = info.id;
  if (graph) *graph = info.graph;
  if (deps) *deps = info.dependencies;
  if (edges) *edges = info.edges;
  if (num_deps) *num_deps = info.count;
  return cudaSuccess;
}

cudaError_t IsCapturing(cudaStream_t handle, cudaStreamCaptureStatus* status, DefaultStream ds) {
  return Info(handle, status, nullptr, nullptr, nullptr, nullptr, nullptr, ds);
}

cudaError_t UpdateDependencies(cudaStream_t handle, cudaGraphNode_t* deps, size_t count, unsigned flags,
                               DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  // 0 means cudaStreamAddCaptureDependencies.
  if ((count != 0 && deps == nullptr) ||
      (flags != 0 && flags != cudaStreamAddCaptureDependencies && flags != cudaStreamSetCaptureDependencies)) {
    return cudaErrorInvalidValue;
  }
  return Captures::Get().UpdateDependencies(*s, deps, count, flags);
}

}  // namespace
}  // namespace ncclsim

using ncclsim::DefaultStream;
using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode) {
  return Report(ncclsim::Begin(s, nullptr, nullptr, 0, mode, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t s, cudaStreamCaptureMode mode) {
  return Report(ncclsim::Begin(s, nullptr, nullptr, 0, mode, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t graph,
                                                         const cudaGraphNode_t* deps, const cudaGraphEdgeData*,
                                                         size_t count, cudaStreamCaptureMode mode) {
  if (graph == nullptr) return Report(cudaErrorInvalidValue);
  return Report(ncclsim::Begin(s, graph, deps, count, mode, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t s, cudaGraph_t graph,
                                                              const cudaGraphNode_t* deps,
                                                              const cudaGraphEdgeData*, size_t count,
                                                              cudaStreamCaptureMode mode) {
  if (graph == nullptr) return Report(cudaErrorInvalidValue);
  return Report(ncclsim::Begin(s, graph, deps, count, mode, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph) {
  return Report(ncclsim::End(s, graph, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t s, cudaGraph_t* graph) {
  return Report(ncclsim::End(s, graph, DefaultStream::kPerThread));
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
  return Report(ncclsim::Info(s, status, id, graph, deps, edges, num_deps, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t s, cudaStreamCaptureStatus* status,
                                                         unsigned long long* id, cudaGraph_t* graph,
                                                         const cudaGraphNode_t** deps,
                                                         const cudaGraphEdgeData** edges, size_t* num_deps) {
  return Report(ncclsim::Info(s, status, id, graph, deps, edges, num_deps, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* deps,
                                                               const cudaGraphEdgeData*, size_t count,
                                                               unsigned int flags) {
  return Report(ncclsim::UpdateDependencies(s, deps, count, flags, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t s, cudaGraphNode_t* deps,
                                                                    const cudaGraphEdgeData*, size_t count,
                                                                    unsigned int flags) {
  return Report(ncclsim::UpdateDependencies(s, deps, count, flags, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  ncclsim::CountCall();
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  if (mode == nullptr || !ncclsim::ValidMode(*mode)) return Report(cudaErrorInvalidValue);
  *mode = ncclsim::Captures::ExchangeThreadMode(*mode);
  return cudaSuccess;
}
