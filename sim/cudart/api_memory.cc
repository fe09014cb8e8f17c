// Memory entry points. Device memory is host memory, so every copy is a memcpy.
#include <cuda_runtime_api.h>

#include <cstring>

#include "allocations.h"
#include "api_common.h"
#include "capture.h"

namespace ncclsim {
namespace {

constexpr unsigned kDeviceTypes = (1u << cudaMemoryTypeDevice) | (1u << cudaMemoryTypeManaged);
constexpr unsigned kHostTypes = 1u << cudaMemoryTypeHost;

cudaError_t Malloc(void** out, size_t size, cudaMemoryType type) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (out == nullptr) return cudaErrorInvalidValue;
  if (cudaError_t e = Captures::Get().CheckUnsafeCall(); e != cudaSuccess) return e;
  const int device = Runtime::current_device();
  if (device >= Runtime::Get().device_count()) return cudaErrorInvalidDevice;
  *out = Allocate(size, type, type == cudaMemoryTypeHost ? -1 : device);
  return *out ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t Free(void* ptr, unsigned types) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (ptr == nullptr) return cudaSuccess;  // cudaFree(0) is the usual "initialise now" idiom
  if (cudaError_t e = Captures::Get().CheckUnsafeCall(); e != cudaSuccess) return e;
  // Freeing implicitly synchronises the device, as in CUDA.
  Runtime::Get().SynchronizeDevice(Runtime::current_device());
  return Release(ptr, types) ? cudaSuccess : cudaErrorInvalidValue;
}

// Synchronous copies and sets run on the caller's thread once the default stream (and, for
// the legacy stream, every blocking stream) has drained: later work is then ordered after them.
cudaError_t RunOnDefaultStream(DefaultStream ds, void (*op)(void*, const void*, int, size_t), void* dst,
                               const void* src, int value, size_t count) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(nullptr, ds, &s); e != cudaSuccess) return e;
  if (count != 0 && (dst == nullptr || (op == nullptr))) return cudaErrorInvalidValue;
  if (cudaError_t e = CheckSynchronize(*s); e != cudaSuccess) return e;
  WaitForAll(Runtime::Get().LegacyOrdering(*s));
  s->WaitFor(s->last_ticket());
  op(dst, src, value, count);
  return cudaSuccess;
}

void CopyBytes(void* dst, const void* src, int, size_t count) {
  if (count) std::memmove(dst, src, count);
}
void SetBytes(void* dst, const void*, int value, size_t count) {
  if (count) std::memset(dst, value, count);
}

cudaError_t Copy(void* dst, const void* src, size_t count, DefaultStream ds) {
  if (count != 0 && src == nullptr) return cudaErrorInvalidValue;
  return RunOnDefaultStream(ds, CopyBytes, dst, src, 0, count);
}

cudaError_t CopyAsync(void* dst, const void* src, size_t count, cudaStream_t handle, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (count != 0 && (dst == nullptr || src == nullptr)) return cudaErrorInvalidValue;
  return Runtime::Get().Submit(s, MakeAction(cudaGraphNodeTypeMemcpy, [=] { CopyBytes(dst, src, 0, count); }),
                               /*trivial=*/true);
}

cudaError_t SetAsync(void* dst, int value, size_t count, cudaStream_t handle, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (count != 0 && dst == nullptr) return cudaErrorInvalidValue;
  return Runtime::Get().Submit(s, MakeAction(cudaGraphNodeTypeMemset, [=] { SetBytes(dst, nullptr, value, count); }),
                               /*trivial=*/true);
}

cudaError_t PointerAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (attributes == nullptr) return cudaErrorInvalidValue;
  std::memset(attributes, 0, sizeof(*attributes));
  Allocation a = Find(ptr);
  attributes->type = a.type;
  attributes->device = a.device < 0 ? Runtime::current_device() : a.device;
  if (a.type != cudaMemoryTypeUnregistered) {
    attributes->devicePointer = const_cast<void*>(ptr);
    attributes->hostPointer = const_cast<void*>(ptr);
  }
  return cudaSuccess;
}

}  // namespace
}  // namespace ncclsim

using ncclsim::DefaultStream;
using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaMalloc(void** ptr, size_t size) {
  return Report(ncclsim::Malloc(ptr, size, cudaMemoryTypeDevice));
}
NCCLSIM_EXPORT cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int) {
  return Report(ncclsim::Malloc(ptr, size, cudaMemoryTypeManaged));
}
NCCLSIM_EXPORT cudaError_t cudaMallocHost(void** ptr, size_t size) {
  return Report(ncclsim::Malloc(ptr, size, cudaMemoryTypeHost));
}
NCCLSIM_EXPORT cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int) {
  return Report(ncclsim::Malloc(ptr, size, cudaMemoryTypeHost));
}
NCCLSIM_EXPORT cudaError_t cudaFree(void* ptr) { return Report(ncclsim::Free(ptr, ncclsim::kDeviceTypes)); }
NCCLSIM_EXPORT cudaError_t cudaFreeHost(void* ptr) { return Report(ncclsim::Free(ptr, ncclsim::kHostTypes)); }
NCCLSIM_EXPORT cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  return Report(ncclsim::PointerAttributes(attributes, ptr));
}

NCCLSIM_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind) {
  return Report(ncclsim::Copy(dst, src, count, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, cudaMemcpyKind) {
  return Report(ncclsim::Copy(dst, src, count, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind,
                                           cudaStream_t s) {
  return Report(ncclsim::CopyAsync(dst, src, count, s, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, cudaMemcpyKind,
                                                cudaStream_t s) {
  return Report(ncclsim::CopyAsync(dst, src, count, s, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaMemset(void* dst, int value, size_t count) {
  return Report(ncclsim::RunOnDefaultStream(DefaultStream::kLegacy, ncclsim::SetBytes, dst, nullptr, value, count));
}
NCCLSIM_EXPORT cudaError_t cudaMemset_ptds(void* dst, int value, size_t count) {
  return Report(
      ncclsim::RunOnDefaultStream(DefaultStream::kPerThread, ncclsim::SetBytes, dst, nullptr, value, count));
}
NCCLSIM_EXPORT cudaError_t cudaMemsetAsync(void* dst, int value, size_t count, cudaStream_t s) {
  return Report(ncclsim::SetAsync(dst, value, count, s, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaMemsetAsync_ptsz(void* dst, int value, size_t count, cudaStream_t s) {
  return Report(ncclsim::SetAsync(dst, value, count, s, DefaultStream::kPerThread));
}
