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
    case cudaErrorStreamCaptureUnsupported: return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    case cudaErrorStreamCaptureImplicit: return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
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
CUresult StreamWaitEvent(CUstream stream, CUevent event) {
  return ToDriver(ncclsim_rt_stream_wait_event(stream, event));
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

CUresult EventCreate(CUevent* event, unsigned flags) { return ToDriver(ncclsim_rt_event_create(event, flags)); }
CUresult EventDestroy(CUevent event) { return ToDriver(ncclsim_rt_event_destroy(event)); }
CUresult EventRecord(CUevent event, CUstream stream) { return ToDriver(ncclsim_rt_event_record(event, stream)); }
CUresult EventQuery(CUevent event) { return ToDriver(ncclsim_rt_event_query(event)); }
CUresult EventSynchronize(CUevent event) { return ToDriver(ncclsim_rt_event_synchronize(event)); }
CUresult EventElapsedTime(float* ms, CUevent start, CUevent end) {
  return ToDriver(ncclsim_rt_event_elapsed(ms, start, end));
}

}  // namespace ncclsim::driver::rt
