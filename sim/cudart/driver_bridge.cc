// The bridge is the runtime's own entry points with the caller's last error put back afterwards.
// The library links with -Bsymbolic-functions, so these calls bind inside the sim runtime and a
// preloaded watcher's hooks never see driver calls as runtime calls.
#include "driver_bridge.h"

#include "allocations.h"
#include "api_common.h"
#include "error_state.h"
#include "export.h"
#include "runtime.h"

namespace {

template <typename Call>
cudaError_t KeepLastError(Call&& call) {
  const cudaError_t saved = ncclsim::PeekLastError();
  const cudaError_t result = call();
  ncclsim::RestoreLastError(saved);
  return result;
}

}  // namespace

NCCLSIM_EXPORT int ncclsim_rt_device_count(void) {
  return ncclsim::Runtime::Usable() ? ncclsim::Runtime::Get().device_count() : 0;
}
NCCLSIM_EXPORT int ncclsim_rt_current_device(void) { return ncclsim::Runtime::current_device(); }
NCCLSIM_EXPORT cudaError_t ncclsim_rt_set_current_device(int device) {
  return KeepLastError([&] { return cudaSetDevice(device); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_device_attribute(int* value, int attribute, int device) {
  return KeepLastError([&] { return cudaDeviceGetAttribute(value, static_cast<cudaDeviceAttr>(attribute), device); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_device_synchronize(int device) {
  return KeepLastError([&] {
    int current = 0;
    cudaError_t e = cudaGetDevice(&current);
    if (e == cudaSuccess) e = cudaSetDevice(device);
    if (e != cudaSuccess) return e;
    e = cudaDeviceSynchronize();
    cudaSetDevice(current);
    return e;
  });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_mem_get_info(size_t* free_bytes, size_t* total_bytes) {
  return KeepLastError([&] { return cudaMemGetInfo(free_bytes, total_bytes); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_malloc(void** ptr, size_t size) {
  return KeepLastError([&] { return cudaMalloc(ptr, size); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_free(void* ptr) {
  return KeepLastError([&] { return cudaFree(ptr); });
}
NCCLSIM_EXPORT int ncclsim_rt_find_allocation(const void* address, void** base, size_t* size, int* device,
                                              int* type) {
  const ncclsim::Allocation a = ncclsim::Find(address);
  if (a.type == cudaMemoryTypeUnregistered) return 0;
  if (base != nullptr) *base = a.base;
  if (size != nullptr) *size = a.size;
  if (device != nullptr) *device = a.device;
  if (type != nullptr) *type = a.type;
  return 1;
}

NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_create(cudaStream_t* stream, unsigned flags, int priority) {
  return KeepLastError([&] { return cudaStreamCreateWithPriority(stream, flags, priority); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_destroy(cudaStream_t stream) {
  return KeepLastError([&] { return cudaStreamDestroy(stream); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_query(cudaStream_t stream) {
  return KeepLastError([&] { return cudaStreamQuery(stream); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_synchronize(cudaStream_t stream) {
  return KeepLastError([&] { return cudaStreamSynchronize(stream); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_wait_event(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  return KeepLastError([&] { return cudaStreamWaitEvent(stream, event, flags); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_flags(cudaStream_t stream, unsigned* flags) {
  return KeepLastError([&] { return cudaStreamGetFlags(stream, flags); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_priority(cudaStream_t stream, int* priority) {
  return KeepLastError([&] { return cudaStreamGetPriority(stream, priority); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_device(cudaStream_t stream, int* device) {
  return KeepLastError([&] { return cudaStreamGetDevice(stream, device); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_is_capturing(cudaStream_t stream, int* status) {
  return KeepLastError([&] {
    cudaStreamCaptureStatus s = cudaStreamCaptureStatusNone;
    const cudaError_t e = cudaStreamIsCapturing(stream, &s);
    if (e == cudaSuccess && status != nullptr) *status = s;
    return e;
  });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_launch_host_func(cudaStream_t stream, void (*fn)(void*), void* data) {
  return KeepLastError([&] { return cudaLaunchHostFunc(stream, fn, data); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_launch_owned(cudaStream_t stream, int node_type, void (*fn)(void*),
                                                   void* data, void (*release)(void*)) {
  std::shared_ptr<void> owned(data, release);
  return KeepLastError([&] {
    std::shared_ptr<ncclsim::Stream> s;
    if (cudaError_t e = ncclsim::ResolveStream(stream, ncclsim::DefaultStream::kLegacy, &s); e != cudaSuccess) {
      return e;
    }
    if (fn == nullptr) return cudaErrorInvalidValue;
    return ncclsim::Runtime::Get().Submit(
        s, ncclsim::MakeAction(static_cast<cudaGraphNodeType>(node_type), [owned, fn] { fn(owned.get()); }),
        /*trivial=*/false);
  });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_launch_noop(cudaStream_t stream) {
  return KeepLastError([&] { return ncclsim::LaunchNoOpKernel(stream, ncclsim::DefaultStream::kLegacy); });
}

NCCLSIM_EXPORT cudaError_t ncclsim_rt_event_create(cudaEvent_t* event, unsigned flags) {
  return KeepLastError([&] { return cudaEventCreateWithFlags(event, flags); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_event_destroy(cudaEvent_t event) {
  return KeepLastError([&] { return cudaEventDestroy(event); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_event_record(cudaEvent_t event, cudaStream_t stream, unsigned flags) {
  // cudaEventRecord itself when it can be: that one counts as a watcher's call (call_count.h).
  return KeepLastError([&] { return flags == 0 ? cudaEventRecord(event, stream) : cudaEventRecordWithFlags(event, stream, flags); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_event_query(cudaEvent_t event) {
  return KeepLastError([&] { return cudaEventQuery(event); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_event_synchronize(cudaEvent_t event) {
  return KeepLastError([&] { return cudaEventSynchronize(event); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_event_elapsed(float* ms, cudaEvent_t start, cudaEvent_t end) {
  return KeepLastError([&] { return cudaEventElapsedTime(ms, start, end); });
}

NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_begin_capture(cudaStream_t stream, int mode, cudaGraph_t graph,
                                                           const cudaGraphNode_t* dependencies, size_t count) {
  const auto m = static_cast<cudaStreamCaptureMode>(mode);
  return KeepLastError([&] {
    return graph == nullptr ? cudaStreamBeginCapture(stream, m)
                            : cudaStreamBeginCaptureToGraph(stream, graph, dependencies, nullptr, count, m);
  });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_end_capture(cudaStream_t stream, cudaGraph_t* graph) {
  return KeepLastError([&] { return cudaStreamEndCapture(stream, graph); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_get_capture_info(cudaStream_t stream, int* status,
                                                              unsigned long long* id, cudaGraph_t* graph,
                                                              const cudaGraphNode_t** dependencies,
                                                              const cudaGraphEdgeData** edges, size_t* count) {
  return KeepLastError([&] {
    cudaStreamCaptureStatus s = cudaStreamCaptureStatusNone;
    const cudaError_t e = cudaStreamGetCaptureInfo(stream, status != nullptr ? &s : nullptr, id, graph,
                                                   dependencies, edges, count);
    if (e == cudaSuccess) *status = s;
    return e;
  });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_update_capture_dependencies(cudaStream_t stream,
                                                                         cudaGraphNode_t* dependencies,
                                                                         size_t count, unsigned flags) {
  return KeepLastError([&] { return cudaStreamUpdateCaptureDependencies(stream, dependencies, nullptr, count, flags); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_exchange_capture_mode(int* mode) {
  return KeepLastError([&] {
    if (mode == nullptr) return cudaThreadExchangeStreamCaptureMode(nullptr);
    auto m = static_cast<cudaStreamCaptureMode>(*mode);
    const cudaError_t e = cudaThreadExchangeStreamCaptureMode(&m);
    *mode = m;
    return e;
  });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_create(cudaGraph_t* graph, unsigned flags) {
  return KeepLastError([&] { return cudaGraphCreate(graph, flags); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_destroy(cudaGraph_t graph) {
  return KeepLastError([&] { return cudaGraphDestroy(graph); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_get_nodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  return KeepLastError([&] { return cudaGraphGetNodes(graph, nodes, count); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_node_type(cudaGraphNode_t node, int* type) {
  return KeepLastError([&] {
    cudaGraphNodeType t = cudaGraphNodeTypeEmpty;
    const cudaError_t e = cudaGraphNodeGetType(node, type != nullptr ? &t : nullptr);
    if (e == cudaSuccess) *type = t;
    return e;
  });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_add_host_node(cudaGraphNode_t* node, cudaGraph_t graph,
                                                          const cudaGraphNode_t* dependencies, size_t count,
                                                          void (*fn)(void*), void* data) {
  const cudaHostNodeParams params{fn, data};
  return KeepLastError([&] { return cudaGraphAddHostNode(node, graph, dependencies, count, &params); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_instantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                        cudaGraphInstantiateParams* params) {
  return KeepLastError([&] { return cudaGraphInstantiateWithParams(exec, graph, params); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_launch(cudaGraphExec_t exec, cudaStream_t stream) {
  return KeepLastError([&] { return cudaGraphLaunch(exec, stream); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_upload(cudaGraphExec_t exec, cudaStream_t stream) {
  return KeepLastError([&] { return cudaGraphUpload(exec, stream); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_exec_update(cudaGraphExec_t exec, cudaGraph_t graph,
                                                        cudaGraphExecUpdateResultInfo* info) {
  return KeepLastError([&] { return cudaGraphExecUpdate(exec, graph, info); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_exec_destroy(cudaGraphExec_t exec) {
  return KeepLastError([&] { return cudaGraphExecDestroy(exec); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_user_object_create(cudaUserObject_t* object, void* ptr, void (*destroy)(void*),
                                                         unsigned references, unsigned flags) {
  return KeepLastError([&] { return cudaUserObjectCreate(object, ptr, destroy, references, flags); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_user_object_change(cudaUserObject_t object, unsigned count, int retain) {
  return KeepLastError([&] { return retain ? cudaUserObjectRetain(object, count) : cudaUserObjectRelease(object, count); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_graph_user_object_change(cudaGraph_t graph, cudaUserObject_t object,
                                                               unsigned count, unsigned flags, int retain) {
  return KeepLastError([&] {
    return retain ? cudaGraphRetainUserObject(graph, object, count, flags) : cudaGraphReleaseUserObject(graph, object, count);
  });
}
