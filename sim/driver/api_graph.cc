// Stream capture and CUDA graphs: the sim runtime's (sim/cudart capture.h and graph.h), reached
// through the bridge, so a driver call never touches the runtime's last error. CUgraph is
// cudaGraph_t, CUgraphNode cudaGraphNode_t, CUgraphExec cudaGraphExec_t, as in real CUDA.
#include "driver_api.h"
#include "runtime_link.h"

namespace ncclsim::driver {
namespace {

CUresult InstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  CUDA_GRAPH_INSTANTIATE_PARAMS params{};
  params.flags = flags;
  // Upload needs the stream only the params form carries.
  if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) return CUDA_ERROR_INVALID_VALUE;
  return rt::GraphInstantiate(exec, graph, &params);
}

// cuGraphInstantiate before 12.0: the error node and a log buffer, which gets an empty string.
CUresult InstantiateWithLog(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log, size_t size) {
  if (error_node != nullptr) *error_node = nullptr;
  if (log != nullptr && size > 0) log[0] = '\0';
  return InstantiateWithFlags(exec, graph, 0);
}

CUresult CaptureInfo(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                     const CUgraphNode** dependencies, const CUgraphEdgeData** edges, size_t* count) {
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return rt::GetCaptureInfo(stream, status, id, graph, dependencies, edges, count);
}

CUresult ExecUpdateV1(CUgraphExec exec, CUgraph graph, CUgraphNode* error_node, CUgraphExecUpdateResult* result) {
  if (error_node == nullptr || result == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUgraphExecUpdateResultInfo info{};
  const CUresult r = rt::GraphExecUpdate(exec, graph, &info);
  *error_node = info.errorNode;
  *result = info.result;
  return r;
}

}  // namespace
}  // namespace ncclsim::driver

namespace drv = ncclsim::driver;
namespace rt = ncclsim::driver::rt;
using drv::PerThread;

// The 10.0 form, without a mode, captures in global mode.
NCCLSIM_DRIVER_EXPORT CUresult cuStreamBeginCapture(CUstream stream) {
  return rt::BeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL, nullptr, nullptr, 0);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream stream) {
  return rt::BeginCapture(PerThread(stream), CU_STREAM_CAPTURE_MODE_GLOBAL, nullptr, nullptr, 0);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode) {
  return rt::BeginCapture(stream, mode, nullptr, nullptr, 0);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream stream, CUstreamCaptureMode mode) {
  return rt::BeginCapture(PerThread(stream), mode, nullptr, nullptr, 0);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream stream, CUgraph graph, const CUgraphNode* deps,
                                                           const CUgraphEdgeData*, size_t count,
                                                           CUstreamCaptureMode mode) {
  if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return rt::BeginCapture(stream, mode, graph, deps, count);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream stream, CUgraph graph,
                                                                const CUgraphNode* deps, const CUgraphEdgeData*,
                                                                size_t count, CUstreamCaptureMode mode) {
  if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return rt::BeginCapture(PerThread(stream), mode, graph, deps, count);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph) {
  return rt::EndCapture(stream, graph);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph* graph) {
  return rt::EndCapture(PerThread(stream), graph);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetCaptureInfo(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id) {
  return drv::CaptureInfo(stream, status, id, nullptr, nullptr, nullptr, nullptr);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream stream, CUstreamCaptureStatus* status,
                                                           cuuint64_t* id) {
  return drv::CaptureInfo(PerThread(stream), status, id, nullptr, nullptr, nullptr, nullptr);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream stream, CUstreamCaptureStatus* status,
                                                         cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
                                                         size_t* count) {
  return drv::CaptureInfo(stream, status, id, graph, deps, nullptr, count);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream stream, CUstreamCaptureStatus* status,
                                                              cuuint64_t* id, CUgraph* graph,
                                                              const CUgraphNode** deps, size_t* count) {
  return drv::CaptureInfo(PerThread(stream), status, id, graph, deps, nullptr, count);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream stream, CUstreamCaptureStatus* status,
                                                         cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
                                                         const CUgraphEdgeData** edges, size_t* count) {
  return drv::CaptureInfo(stream, status, id, graph, deps, edges, count);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream stream, CUstreamCaptureStatus* status,
                                                              cuuint64_t* id, CUgraph* graph,
                                                              const CUgraphNode** deps, const CUgraphEdgeData** edges,
                                                              size_t* count) {
  return drv::CaptureInfo(PerThread(stream), status, id, graph, deps, edges, count);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamUpdateCaptureDependencies(CUstream stream, CUgraphNode* deps, size_t count,
                                                                 unsigned int flags) {
  return rt::UpdateCaptureDependencies(stream, deps, count, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamUpdateCaptureDependencies_ptsz(CUstream stream, CUgraphNode* deps,
                                                                      size_t count, unsigned int flags) {
  return rt::UpdateCaptureDependencies(PerThread(stream), deps, count, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamUpdateCaptureDependencies_v2(CUstream stream, CUgraphNode* deps,
                                                                    const CUgraphEdgeData*, size_t count,
                                                                    unsigned int flags) {
  return rt::UpdateCaptureDependencies(stream, deps, count, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamUpdateCaptureDependencies_v2_ptsz(CUstream stream, CUgraphNode* deps,
                                                                         const CUgraphEdgeData*, size_t count,
                                                                         unsigned int flags) {
  return rt::UpdateCaptureDependencies(PerThread(stream), deps, count, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  return rt::ExchangeCaptureMode(mode);
}

NCCLSIM_DRIVER_EXPORT CUresult cuGraphCreate(CUgraph* graph, unsigned int flags) { return rt::GraphCreate(graph, flags); }
NCCLSIM_DRIVER_EXPORT CUresult cuGraphDestroy(CUgraph graph) { return rt::GraphDestroy(graph); }
NCCLSIM_DRIVER_EXPORT CUresult cuGraphGetNodes(CUgraph graph, CUgraphNode* nodes, size_t* count) {
  return rt::GraphGetNodes(graph, nodes, count);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType* type) {
  return rt::GraphNodeType(node, type);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphAddHostNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                                                  size_t count, const CUDA_HOST_NODE_PARAMS* params) {
  return rt::GraphAddHostNode(node, graph, deps, count, params);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphInstantiate(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log,
                                                  size_t size) {
  return drv::InstantiateWithLog(exec, graph, error_node, log, size);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node,
                                                     char* log, size_t size) {
  return drv::InstantiateWithLog(exec, graph, error_node, log, size);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  return drv::InstantiateWithFlags(exec, graph, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec* exec, CUgraph graph,
                                                            CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  return rt::GraphInstantiate(exec, graph, params);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec* exec, CUgraph graph,
                                                                 CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  if (params != nullptr) params->hUploadStream = PerThread(params->hUploadStream);
  return rt::GraphInstantiate(exec, graph, params);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) { return rt::GraphLaunch(exec, stream); }
NCCLSIM_DRIVER_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream) {
  return rt::GraphLaunch(exec, PerThread(stream));
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphUpload(CUgraphExec exec, CUstream stream) { return rt::GraphUpload(exec, stream); }
NCCLSIM_DRIVER_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec exec, CUstream stream) {
  return rt::GraphUpload(exec, PerThread(stream));
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphNode* error_node,
                                                 CUgraphExecUpdateResult* result) {
  return drv::ExecUpdateV1(exec, graph, error_node, result);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo* info) {
  return rt::GraphExecUpdate(exec, graph, info);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) { return rt::GraphExecDestroy(exec); }

NCCLSIM_DRIVER_EXPORT CUresult cuUserObjectCreate(CUuserObject* object, void* ptr, CUhostFn destroy,
                                                  unsigned int references, unsigned int flags) {
  return rt::UserObjectCreate(object, ptr, destroy, references, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuUserObjectRetain(CUuserObject object, unsigned int count) {
  return rt::UserObjectChange(object, count, /*retain=*/true);
}
NCCLSIM_DRIVER_EXPORT CUresult cuUserObjectRelease(CUuserObject object, unsigned int count) {
  return rt::UserObjectChange(object, count, /*retain=*/false);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                                       unsigned int flags) {
  return rt::GraphUserObjectChange(graph, object, count, flags, /*retain=*/true);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count) {
  return rt::GraphUserObjectChange(graph, object, count, 0, /*retain=*/false);
}
