// The sim runtime's private door for the sim driver (sim/driver, libcuda.so.1), which must share
// the runtime's devices, streams, events and allocations: CUstream is cudaStream_t and CUevent is
// cudaEvent_t, as in real CUDA.
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
cudaError_t ncclsim_rt_stream_wait_event(cudaStream_t stream, cudaEvent_t event);
cudaError_t ncclsim_rt_stream_flags(cudaStream_t stream, unsigned* flags);
cudaError_t ncclsim_rt_stream_priority(cudaStream_t stream, int* priority);
cudaError_t ncclsim_rt_stream_device(cudaStream_t stream, int* device);
// *status is a cudaStreamCaptureStatus (CUstreamCaptureStatus uses the same numbers).
cudaError_t ncclsim_rt_stream_is_capturing(cudaStream_t stream, int* status);
// Enqueues fn(data) on the stream's worker; it may block.
cudaError_t ncclsim_rt_launch_host_func(cudaStream_t stream, void (*fn)(void*), void* data);
// Enqueues a kernel that does nothing but keeps its place in the stream order.
cudaError_t ncclsim_rt_launch_noop(cudaStream_t stream);

cudaError_t ncclsim_rt_event_create(cudaEvent_t* event, unsigned flags);
cudaError_t ncclsim_rt_event_destroy(cudaEvent_t event);
cudaError_t ncclsim_rt_event_record(cudaEvent_t event, cudaStream_t stream);
cudaError_t ncclsim_rt_event_query(cudaEvent_t event);
cudaError_t ncclsim_rt_event_synchronize(cudaEvent_t event);
cudaError_t ncclsim_rt_event_elapsed(float* ms, cudaEvent_t start, cudaEvent_t end);

}  // extern "C"

#endif  // NCCLWATCH_SIM_CUDART_DRIVER_BRIDGE_H_
