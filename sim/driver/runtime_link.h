// The driver's only way into the sim runtime: sim/cudart's private bridge (driver_bridge.h),
// translated to driver types and codes.
//
// The bridge never touches the runtime's per-thread last error, and neither may anything here: a
// watcher polls completion with cuEventQuery while the job's own pending cudaErrorNotReady must
// stay exactly as it was. So this file never calls the public cuda* runtime API.
#ifndef NCCLWATCH_SIM_DRIVER_RUNTIME_LINK_H_
#define NCCLWATCH_SIM_DRIVER_RUNTIME_LINK_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace ncclsim::driver::rt {

// Counts one CUDA call of the calling thread (sim/cudart/call_count.h).
void CountCall();

int DeviceCount();
// The runtime's current device of the calling thread.
int CurrentDevice();
CUresult DeviceAttribute(int* value, CUdevice_attribute attribute, CUdevice device);
CUresult MemGetInfo(size_t* free_bytes, size_t* total_bytes);
CUresult Malloc(void** ptr, size_t size);
CUresult Free(void* ptr);
// A runtime allocation (cudaMalloc and friends) containing an address.
struct Allocation {
  uintptr_t base = 0;
  size_t size = 0;
  int device = -1;  // -1 for pinned host memory
  bool managed = false;
};
// False if `address` is in no runtime allocation.
bool FindAllocation(uintptr_t address, Allocation* out);
// Waits for all work of `device`.
CUresult DeviceSynchronize(int device);

CUresult StreamCreate(CUstream* stream, unsigned flags, int priority);
CUresult StreamDestroy(CUstream stream);
CUresult StreamQuery(CUstream stream);
CUresult StreamSynchronize(CUstream stream);
// `flags`: CU_EVENT_WAIT_DEFAULT or CU_EVENT_WAIT_EXTERNAL.
CUresult StreamWaitEvent(CUstream stream, CUevent event, unsigned flags);
CUresult StreamFlags(CUstream stream, unsigned* flags);
CUresult StreamPriority(CUstream stream, int* priority);
// The device a stream belongs to (the current device for the default streams).
CUresult StreamDevice(CUstream stream, int* device);
CUresult StreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status);
// Enqueues `fn(data)` on `stream`; it runs on the stream's worker and may block.
CUresult LaunchHostFunc(CUstream stream, void (*fn)(void*), void* data);
// Enqueues a kernel that does nothing but keeps its place in the stream order.
CUresult LaunchNoOp(CUstream stream);
// Enqueues `work` on `stream`; a capture records it as a node of `type` that runs it at every
// replay (driver_bridge.h's ncclsim_rt_launch_owned).
CUresult LaunchWork(CUstream stream, CUgraphNodeType type, std::function<void()> work);

CUresult EventCreate(CUevent* event, unsigned flags);
CUresult EventDestroy(CUevent event);
// `flags`: CU_EVENT_RECORD_DEFAULT or CU_EVENT_RECORD_EXTERNAL.
CUresult EventRecord(CUevent event, CUstream stream, unsigned flags);
CUresult EventQuery(CUevent event);
CUresult EventSynchronize(CUevent event);
CUresult EventElapsedTime(float* ms, CUevent start, CUevent end);

// Capture and graphs (the runtime's, capture.h and graph.h of sim/cudart). `graph` null begins a
// capture into a new graph.
CUresult BeginCapture(CUstream stream, CUstreamCaptureMode mode, CUgraph graph, const CUgraphNode* dependencies,
                      size_t count);
CUresult EndCapture(CUstream stream, CUgraph* graph);
CUresult GetCaptureInfo(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                        const CUgraphNode** dependencies, const CUgraphEdgeData** edges, size_t* count);
CUresult UpdateCaptureDependencies(CUstream stream, CUgraphNode* dependencies, size_t count, unsigned flags);
CUresult ExchangeCaptureMode(CUstreamCaptureMode* mode);
CUresult GraphCreate(CUgraph* graph, unsigned flags);
CUresult GraphDestroy(CUgraph graph);
CUresult GraphGetNodes(CUgraph graph, CUgraphNode* nodes, size_t* count);
CUresult GraphNodeType(CUgraphNode node, CUgraphNodeType* type);
CUresult GraphAddHostNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies, size_t count,
                          const CUDA_HOST_NODE_PARAMS* params);
CUresult GraphInstantiate(CUgraphExec* exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* params);
CUresult GraphLaunch(CUgraphExec exec, CUstream stream);
CUresult GraphUpload(CUgraphExec exec, CUstream stream);
CUresult GraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo* info);
CUresult GraphExecDestroy(CUgraphExec exec);
CUresult UserObjectCreate(CUuserObject* object, void* ptr, CUhostFn destroy, unsigned references, unsigned flags);
CUresult UserObjectChange(CUuserObject object, unsigned count, bool retain);
CUresult GraphUserObjectChange(CUgraph graph, CUuserObject object, unsigned count, unsigned flags, bool retain);

}  // namespace ncclsim::driver::rt

#endif  // NCCLWATCH_SIM_DRIVER_RUNTIME_LINK_H_
