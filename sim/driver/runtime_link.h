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
CUresult StreamWaitEvent(CUstream stream, CUevent event);
CUresult StreamFlags(CUstream stream, unsigned* flags);
CUresult StreamPriority(CUstream stream, int* priority);
// The device a stream belongs to (the current device for the default streams).
CUresult StreamDevice(CUstream stream, int* device);
CUresult StreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status);
// Enqueues `fn(data)` on `stream`; it runs on the stream's worker and may block.
CUresult LaunchHostFunc(CUstream stream, void (*fn)(void*), void* data);
// Enqueues a kernel that does nothing but keeps its place in the stream order.
CUresult LaunchNoOp(CUstream stream);

CUresult EventCreate(CUevent* event, unsigned flags);
CUresult EventDestroy(CUevent event);
CUresult EventRecord(CUevent event, CUstream stream);
CUresult EventQuery(CUevent event);
CUresult EventSynchronize(CUevent event);
CUresult EventElapsedTime(float* ms, CUevent start, CUevent end);

}  // namespace ncclsim::driver::rt

#endif  // NCCLWATCH_SIM_DRIVER_RUNTIME_LINK_H_
