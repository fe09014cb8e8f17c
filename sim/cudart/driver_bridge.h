// The sim runtime's private door for the sim driver (sim/driver, libcuda.so.1), which must share
// the runtime's devices, streams, events, graphs and allocations: CUstream is cudaStream_t, CUevent
// is cudaEvent_t, CUgraph is cudaGraph_t (and so on), as in real CUDA. The sim NCCL uses one
// function of it too (ncclsim_rt_set_host_node_prepare).
//
// Contract: none of these functions reads or changes the calling thread's runtime last error
// (cudaGetLastError / cudaPeekAtLastError read the same before and after). That is the point of
// the driver API for a watcher: it records and polls completion with cuEventRecord/cuEventQuery
// while a job's own pending cudaErrorNotReady stays exactly as the job left it.
// Every function returns a cudaError_t code; handles are the runtime's own (0 = legacy stream).
// Exported under the version node NCCLSIM_PRIVATE (libcudart.map), so no real program binds them.
#ifndef NCCLWATCH_SIM_CUDART_DRIVER_BRIDGE_H_
#define NCCLWATCH_SIM_CUDART_DRIVER_BRIDGE_H_

#include <cuda_runtime_api.h>

#include <cstddef>

extern "C" {

// Counts one CUDA call of the calling thread (call_count.h).
void ncclsim_rt_count_call(void);

int ncclsim_rt_device_count(void);
int ncclsim_rt_current_device(void);
cudaError_t ncclsim_rt_set_current_device(int device);
// `attribute` is a cudaDeviceAttr; CUdevice_attribute uses the same numbers.
cudaError_t ncclsim_rt_device_attribute(int* value, int attribute, int device);
cudaError_t ncclsim_rt_device_synchronize(int device);
// Memory of the calling thread's current device.
cudaError_t ncclsim_rt_mem_get_info(size_t* free_bytes, size_t* total_bytes);
cudaError_t ncclsim_rt_malloc(void** ptr, size_t size);
cudaError_t ncclsim_rt_free(void* ptr);
// The runtime allocation containing `address`: 1 and its base, size, device (-1 for host memory)
// and cudaMemoryType; 0 when the address is in none.
int ncclsim_rt_find_allocation(const void* address, void** base, size_t* size, int* device, int* type);

cudaError_t ncclsim_rt_stream_create(cudaStream_t* stream, unsigned flags, int priority);
cudaError_t ncclsim_rt_stream_destroy(cudaStream_t stream);
cudaError_t ncclsim_rt_stream_query(cudaStream_t stream);
cudaError_t ncclsim_rt_stream_synchronize(cudaStream_t stream);
// `flags`: cudaEventWaitDefault or cudaEventWaitExternal (the CU_EVENT_WAIT_* values).
cudaError_t ncclsim_rt_stream_wait_event(cudaStream_t stream, cudaEvent_t event, unsigned flags);
cudaError_t ncclsim_rt_stream_flags(cudaStream_t stream, unsigned* flags);
cudaError_t ncclsim_rt_stream_priority(cudaStream_t stream, int* priority);
cudaError_t ncclsim_rt_stream_device(cudaStream_t stream, int* device);
// *status is a cudaStreamCaptureStatus (CUstreamCaptureStatus uses the same numbers).
cudaError_t ncclsim_rt_stream_is_capturing(cudaStream_t stream, int* status);
// Enqueues fn(data) on the stream's worker; it may block.
cudaError_t ncclsim_rt_launch_host_func(cudaStream_t stream, void (*fn)(void*), void* data);
// Enqueues a kernel that does nothing but keeps its place in the stream order.
cudaError_t ncclsim_rt_launch_noop(cudaStream_t stream);
// Enqueues fn(data) on the stream's worker like ncclsim_rt_launch_host_func, but the runtime owns
// `data` (failure included) and calls release(data) once nothing can run it any more: after the
// work ran, or, when the stream captures, when the graph node (and every executable graph of it)
// is gone, so that each replay runs fn(data) again. `node_type` is the cudaGraphNodeType a capture
// records (the driver's copies and sets are memcpy and memset nodes).
cudaError_t ncclsim_rt_launch_owned(cudaStream_t stream, int node_type, void (*fn)(void*), void* data,
                                    void (*release)(void*));

cudaError_t ncclsim_rt_event_create(cudaEvent_t* event, unsigned flags);
cudaError_t ncclsim_rt_event_destroy(cudaEvent_t event);
// `flags`: cudaEventRecordDefault or cudaEventRecordExternal (the CU_EVENT_RECORD_* values).
cudaError_t ncclsim_rt_event_record(cudaEvent_t event, cudaStream_t stream, unsigned flags);
cudaError_t ncclsim_rt_event_query(cudaEvent_t event);
cudaError_t ncclsim_rt_event_synchronize(cudaEvent_t event);
cudaError_t ncclsim_rt_event_elapsed(float* ms, cudaEvent_t start, cudaEvent_t end);

// Capture and graphs: the runtime calls of the same meaning (capture.h, graph.h). The driver's
// enums and structs have the runtime's numbers and layouts (CUstreamCaptureMode,
// CUstreamCaptureStatus, CUgraphNodeType, CUDA_GRAPH_INSTANTIATE_PARAMS, CUgraphEdgeData,
// CUgraphExecUpdateResultInfo). `graph` null begins a capture into a new graph.
cudaError_t ncclsim_rt_stream_begin_capture(cudaStream_t stream, int mode, cudaGraph_t graph,
                                            const cudaGraphNode_t* dependencies, size_t count);
cudaError_t ncclsim_rt_stream_end_capture(cudaStream_t stream, cudaGraph_t* graph);
cudaError_t ncclsim_rt_stream_get_capture_info(cudaStream_t stream, int* status, unsigned long long* id,
                                               cudaGraph_t* graph, const cudaGraphNode_t** dependencies,
                                               const cudaGraphEdgeData** edges, size_t* count);
cudaError_t ncclsim_rt_stream_update_capture_dependencies(cudaStream_t stream, cudaGraphNode_t* dependencies,
                                                          size_t count, unsigned flags);
cudaError_t ncclsim_rt_exchange_capture_mode(int* mode);
cudaError_t ncclsim_rt_graph_create(cudaGraph_t* graph, unsigned flags);
cudaError_t ncclsim_rt_graph_destroy(cudaGraph_t graph);
cudaError_t ncclsim_rt_graph_get_nodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count);
cudaError_t ncclsim_rt_graph_node_type(cudaGraphNode_t node, int* type);
cudaError_t ncclsim_rt_graph_add_host_node(cudaGraphNode_t* node, cudaGraph_t graph,
                                           const cudaGraphNode_t* dependencies, size_t count, void (*fn)(void*),
                                           void* data);
cudaError_t ncclsim_rt_graph_instantiate(cudaGraphExec_t* exec, cudaGraph_t graph, cudaGraphInstantiateParams* params);
cudaError_t ncclsim_rt_graph_launch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t ncclsim_rt_graph_upload(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t ncclsim_rt_graph_exec_update(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo* info);
cudaError_t ncclsim_rt_graph_exec_destroy(cudaGraphExec_t exec);
cudaError_t ncclsim_rt_user_object_create(cudaUserObject_t* object, void* ptr, void (*destroy)(void*),
                                          unsigned references, unsigned flags);
// `retain`: 1 retains `count` references, 0 releases them.
cudaError_t ncclsim_rt_user_object_change(cudaUserObject_t object, unsigned count, int retain);
cudaError_t ncclsim_rt_graph_user_object_change(cudaGraph_t graph, cudaUserObject_t object, unsigned count,
                                                unsigned flags, int retain);

// Host nodes whose launch needs work on the launching thread (the sim NCCL's replayed
// collectives take their turn in their communicator when cudaGraphLaunch is called, as eager
// ones do when called). For every host node calling `fn` in a launched graph, cudaGraphLaunch
// calls prepare(node's user data, launch id) on its own thread, in node order, before it
// enqueues anything; the node then calls fn(prepare's result) in stream order, or nothing when
// the result is null. Launch ids count the process's graph launches from 1.
typedef void* (*ncclsim_rt_host_node_prepare_fn)(void* user_data, unsigned long long launch_id);
void ncclsim_rt_set_host_node_prepare(cudaHostFn_t fn, ncclsim_rt_host_node_prepare_fn prepare);

}  // extern "C"

#endif  // NCCLWATCH_SIM_CUDART_DRIVER_BRIDGE_H_
