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
NCCLSIM_EXPORT cudaError_t ncclsim_rt_stream_wait_event(cudaStream_t stream, cudaEvent_t event) {
  return KeepLastError([&] { return cudaStreamWaitEvent(stream, event, 0); });
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
NCCLSIM_EXPORT cudaError_t ncclsim_rt_launch_noop(cudaStream_t stream) {
  return KeepLastError([&] { return ncclsim::LaunchNoOpKernel(stream, ncclsim::DefaultStream::kLegacy); });
}

NCCLSIM_EXPORT cudaError_t ncclsim_rt_event_create(cudaEvent_t* event, unsigned flags) {
  return KeepLastError([&] { return cudaEventCreateWithFlags(event, flags); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_event_destroy(cudaEvent_t event) {
  return KeepLastError([&] { return cudaEventDestroy(event); });
}
NCCLSIM_EXPORT cudaError_t ncclsim_rt_event_record(cudaEvent_t event, cudaStream_t stream) {
  return KeepLastError([&] { return cudaEventRecord(event, stream); });
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
