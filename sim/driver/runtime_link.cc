#include "runtime_link.h"

#include "cudart/driver_bridge.h"

namespace ncclsim::driver::rt {
namespace {

// The runtime codes the bridge returns, as driver codes. Most share their number by design
// (cudaErrorInvalidValue = CUDA_ERROR_INVALID_VALUE = 1, cudaErrorNotReady = CUDA_ERROR_NOT_READY
// = 600); the others are listed.
CUresult ToDriver(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return CUDA_SUCCESS;
    case cudaErrorInvalidValue: return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorMemoryAllocation: return CUDA_ERROR_OUT_OF_MEMORY;
    case cudaErrorInitializationError: return CUDA_ERROR_NOT_INITIALIZED;  // used in a forked child
    case cudaErrorNoDevice: return CUDA_ERROR_NO_DEVICE;
    case cudaErrorInvalidDevice: return CUDA_ERROR_INVALID_DEVICE;
    case cudaErrorInvalidResourceHandle: return CUDA_ERROR_INVALID_HANDLE;
    case cudaErrorNotReady: return CUDA_ERROR_NOT_READY;
    case cudaErrorNotSupported: return CUDA_ERROR_NOT_SUPPORTED;
    case cudaErrorIllegalState: return CUDA_ERROR_ILLEGAL_STATE;
    case cudaErrorStreamCaptureUnsupported: return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    case cudaErrorStreamCaptureInvalidated: return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    case cudaErrorStreamCaptureMerge: return CUDA_ERROR_STREAM_CAPTURE_MERGE;
    case cudaErrorStreamCaptureUnmatched: return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    case cudaErrorStreamCaptureUnjoined: return CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    case cudaErrorStreamCaptureIsolation: return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    case cudaErrorStreamCaptureImplicit: return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    case cudaErrorCapturedEvent: return CUDA_ERROR_CAPTURED_EVENT;
    case cudaErrorStreamCaptureWrongThread: return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    case cudaErrorGraphExecUpdateFailure: return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    case cudaErrorInvalidDeviceFunction: return CUDA_ERROR_INVALID_HANDLE;
    default: return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace

int DeviceCount() { return ncclsim_rt_device_count(); }
int CurrentDevice() { return ncclsim_rt_current_device(); }

CUresult DeviceAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  if (attribute <= 0 || attribute >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  // CU_DEVICE_ATTRIBUTE_* and cudaDevAttr* share their numbers. The real driver answers every
  // attribute below CU_DEVICE_ATTRIBUTE_MAX; one the runtime's profile has no value for is an
  // absent feature, 0.
  const cudaError_t e = ncclsim_rt_device_attribute(value, attribute, device);
  if (e == cudaErrorInvalidValue) {
    *value = 0;
    return CUDA_SUCCESS;
  }
  return ToDriver(e);
}
CUresult MemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  return ToDriver(ncclsim_rt_mem_get_info(free_bytes, total_bytes));
}
CUresult Malloc(void** ptr, size_t size) { return ToDriver(ncclsim_rt_malloc(ptr, size)); }
CUresult Free(void* ptr) { return ToDriver(ncclsim_rt_free(ptr)); }
bool FindAllocation(uintptr_t address, Allocation* out) {
  void* base = nullptr;
  int type = 0;
  if (!ncclsim_rt_find_allocation(reinterpret_cast<const void*>(address), &base, &out->size, &out->device, &type)) {
    return false;
  }
  out->base = reinterpret_cast<uintptr_t>(base);
  out->managed = type == cudaMemoryTypeManaged;
  return true;
}
void CountCall() { ncclsim_rt_count_call(); }

CUresult DeviceSynchronize(int device) { return ToDriver(ncclsim_rt_device_synchronize(device)); }

CUresult StreamCreate(CUstream* stream, unsigned flags, int priority) {
  return ToDriver(ncclsim_rt_stream_create(stream, flags, priority));
}
CUresult StreamDestroy(CUstream stream) { return ToDriver(ncclsim_rt_stream_destroy(stream)); }
CUresult StreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int s = 0;
  const CUresult r = ToDriver(ncclsim_rt_stream_is_capturing(stream, &s));
  if (r == CUDA_SUCCESS) *status = static_cast<CUstreamCaptureStatus>(s);
  return r;
}
CUresult StreamQuery(CUstream stream) { return ToDriver(ncclsim_rt_stream_query(stream)); }
CUresult StreamSynchronize(CUstream stream) { return ToDriver(ncclsim_rt_stream_synchronize(stream)); }
CUresult StreamWaitEvent(CUstream stream, CUevent event, unsigned flags) {
  return ToDriver(ncclsim_rt_stream_wait_event(stream, event, flags));
}
CUresult StreamFlags(CUstream stream, unsigned* flags) { return ToDriver(ncclsim_rt_stream_flags(stream, flags)); }
CUresult StreamPriority(CUstream stream, int* priority) {
  return ToDriver(ncclsim_rt_stream_priority(stream, priority));
}
CUresult StreamDevice(CUstream stream, int* device) { return ToDriver(ncclsim_rt_stream_device(stream, device)); }
CUresult LaunchHostFunc(CUstream stream, void (*fn)(void*), void* data) {
  return ToDriver(ncclsim_rt_launch_host_func(stream, fn, data));
}
CUresult LaunchNoOp(CUstream stream) { return ToDriver(ncclsim_rt_launch_noop(stream)); }
CUresult LaunchWork(CUstream stream, CUgraphNodeType type, std::function<void()> work) {
  using Work = std::function<void()>;
  return ToDriver(ncclsim_rt_launch_owned(
      stream, type, [](void* w) { (*static_cast<Work*>(w))(); }, new Work(std::move(work)),
      [](void* w) { delete static_cast<Work*>(w); }));
}

CUresult EventCreate(CUevent* event, unsigned flags) { return ToDriver(ncclsim_rt_event_create(event, flags)); }
CUresult EventDestroy(CUevent event) { return ToDriver(ncclsim_rt_event_destroy(event)); }
CUresult EventRecord(CUevent event, CUstream stream, unsigned flags) {
  return ToDriver(ncclsim_rt_event_record(event, stream, flags));
}
CUresult EventQuery(CUevent event) { return ToDriver(ncclsim_rt_event_query(event)); }
CUresult EventSynchronize(CUevent event) { return ToDriver(ncclsim_rt_event_synchronize(event)); }
CUresult EventElapsedTime(float* ms, CUevent start, CUevent end) {
  return ToDriver(ncclsim_rt_event_elapsed(ms, start, end));
}

// The driver's capture and graph types are the runtime's: same numbers, same layouts.
static_assert(sizeof(CUDA_GRAPH_INSTANTIATE_PARAMS) == sizeof(cudaGraphInstantiateParams));
static_assert(sizeof(CUgraphExecUpdateResultInfo) == sizeof(cudaGraphExecUpdateResultInfo));
static_assert(sizeof(CUgraphEdgeData) == sizeof(cudaGraphEdgeData));
static_assert(CU_STREAM_CAPTURE_MODE_RELAXED == static_cast<int>(cudaStreamCaptureModeRelaxed));
static_assert(CU_STREAM_CAPTURE_STATUS_INVALIDATED == static_cast<int>(cudaStreamCaptureStatusInvalidated));
static_assert(CU_GRAPH_NODE_TYPE_EVENT_RECORD == static_cast<int>(cudaGraphNodeTypeEventRecord));

CUresult BeginCapture(CUstream stream, CUstreamCaptureMode mode, CUgraph graph, const CUgraphNode* dependencies,
                      size_t count) {
  return ToDriver(ncclsim_rt_stream_begin_capture(stream, mode, reinterpret_cast<cudaGraph_t>(graph),
                                                  reinterpret_cast<const cudaGraphNode_t*>(dependencies), count));
}
CUresult EndCapture(CUstream stream, CUgraph* graph) {
  return ToDriver(ncclsim_rt_stream_end_capture(stream, reinterpret_cast<cudaGraph_t*>(graph)));
}
CUresult GetCaptureInfo(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                        const CUgraphNode** dependencies, const CUgraphEdgeData** edges, size_t* count) {
  int s = 0;
  unsigned long long i = 0;
  const CUresult r = ToDriver(ncclsim_rt_stream_get_capture_info(
      stream, status != nullptr ? &s : nullptr, id != nullptr ? &i : nullptr, reinterpret_cast<cudaGraph_t*>(graph),
      reinterpret_cast<const cudaGraphNode_t**>(dependencies), reinterpret_cast<const cudaGraphEdgeData**>(edges),
      count));
  if (r == CUDA_SUCCESS) *status = static_cast<CUstreamCaptureStatus>(s);
  if (r == CUDA_SUCCESS && id != nullptr && s == CU_STREAM_CAPTURE_STATUS_ACTIVE) *id = i;
  return r;
}
CUresult UpdateCaptureDependencies(CUstream stream, CUgraphNode* dependencies, size_t count, unsigned flags) {
  return ToDriver(ncclsim_rt_stream_update_capture_dependencies(
      stream, reinterpret_cast<cudaGraphNode_t*>(dependencies), count, flags));
}
CUresult ExchangeCaptureMode(CUstreamCaptureMode* mode) {
  if (mode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int m = *mode;
  const CUresult r = ToDriver(ncclsim_rt_exchange_capture_mode(&m));
  if (r == CUDA_SUCCESS) *mode = static_cast<CUstreamCaptureMode>(m);
  return r;
}
CUresult GraphCreate(CUgraph* graph, unsigned flags) {
  return ToDriver(ncclsim_rt_graph_create(reinterpret_cast<cudaGraph_t*>(graph), flags));
}
CUresult GraphDestroy(CUgraph graph) { return ToDriver(ncclsim_rt_graph_destroy(reinterpret_cast<cudaGraph_t>(graph))); }
CUresult GraphGetNodes(CUgraph graph, CUgraphNode* nodes, size_t* count) {
  return ToDriver(ncclsim_rt_graph_get_nodes(reinterpret_cast<cudaGraph_t>(graph),
                                             reinterpret_cast<cudaGraphNode_t*>(nodes), count));
}
CUresult GraphNodeType(CUgraphNode node, CUgraphNodeType* type) {
  if (type == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int t = 0;
  const CUresult r = ToDriver(ncclsim_rt_graph_node_type(reinterpret_cast<cudaGraphNode_t>(node), &t));
  if (r == CUDA_SUCCESS) *type = static_cast<CUgraphNodeType>(t);
  return r;
}
CUresult GraphAddHostNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t count,
                          const CUDA_HOST_NODE_PARAMS* params) {
  if (params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return ToDriver(ncclsim_rt_graph_add_host_node(reinterpret_cast<cudaGraphNode_t*>(node),
                                                 reinterpret_cast<cudaGraph_t>(graph),
                                                 reinterpret_cast<const cudaGraphNode_t*>(dependencies), count,
                                                 params->fn, params->userData));
}
CUresult GraphInstantiate(CUgraphExec* exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  return ToDriver(ncclsim_rt_graph_instantiate(reinterpret_cast<cudaGraphExec_t*>(exec),
                                               reinterpret_cast<cudaGraph_t>(graph),
                                               reinterpret_cast<cudaGraphInstantiateParams*>(params)));
}
CUresult GraphLaunch(CUgraphExec exec, CUstream stream) {
  return ToDriver(ncclsim_rt_graph_launch(reinterpret_cast<cudaGraphExec_t>(exec), stream));
}
CUresult GraphUpload(CUgraphExec exec, CUstream stream) {
  return ToDriver(ncclsim_rt_graph_upload(reinterpret_cast<cudaGraphExec_t>(exec), stream));
}
CUresult GraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo* info) {
  return ToDriver(ncclsim_rt_graph_exec_update(reinterpret_cast<cudaGraphExec_t>(exec),
                                               reinterpret_cast<cudaGraph_t>(graph),
                                               reinterpret_cast<cudaGraphExecUpdateResultInfo*>(info)));
}
CUresult GraphExecDestroy(CUgraphExec exec) {
  return ToDriver(ncclsim_rt_graph_exec_destroy(reinterpret_cast<cudaGraphExec_t>(exec)));
}
CUresult UserObjectCreate(CUuserObject* object, void* ptr, CUhostFn destroy, unsigned references, unsigned flags) {
  return ToDriver(ncclsim_rt_user_object_create(reinterpret_cast<cudaUserObject_t*>(object), ptr, destroy,
                                                references, flags));
}
CUresult UserObjectChange(CUuserObject object, unsigned count, bool retain) {
  return ToDriver(ncclsim_rt_user_object_change(reinterpret_cast<cudaUserObject_t>(object), count, retain ? 1 : 0));
}
CUresult GraphUserObjectChange(CUgraph graph, CUuserObject object, unsigned count, unsigned flags, bool retain) {
  return ToDriver(ncclsim_rt_graph_user_object_change(reinterpret_cast<cudaGraph_t>(graph),
                                                      reinterpret_cast<cudaUserObject_t>(object), count, flags,
                                                      retain ? 1 : 0));
}

}  // namespace ncclsim::driver::rt
