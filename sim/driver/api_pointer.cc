// Pointer queries over both kinds of device memory: the runtime's allocations (cuMemAlloc and
// cudaMalloc) and VMM mappings.
#include <cstdint>
#include <cstring>

#include "context.h"
#include "driver_api.h"
#include "runtime_link.h"
#include "vmm.h"

namespace ncclsim::driver {
namespace {

struct Range {
  uintptr_t base = 0;
  size_t size = 0;
  int device = -1;  // -1: pinned host memory
  bool managed = false;
  bool vmm = false;
};

bool FindRange(CUdeviceptr ptr, Range* out) {
  const uintptr_t address = static_cast<uintptr_t>(ptr);
  MappedRange mapped;
  if (Vmm::Get().FindMapping(address, &mapped)) {
    *out = Range{mapped.base, mapped.size, mapped.device, false, true};
    return true;
  }
  rt::Allocation a;
  if (!rt::FindAllocation(address, &a)) return false;
  *out = Range{a.base, a.size, a.device, a.managed, false};
  return true;
}

template <typename T>
CUresult Put(void* data, T value) {
  std::memcpy(data, &value, sizeof(value));
  return CUDA_SUCCESS;
}

// One attribute of a known range; the sim's memory is host memory, so device and host pointers
// are the same address.
CUresult Attribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr, const Range& r) {
  const int device = r.device < 0 ? 0 : r.device;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: return Put(data, PrimaryContext(device));
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      return Put<unsigned>(data, r.device < 0 ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE);
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: return Put(data, ptr);
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: return Put(data, reinterpret_cast<void*>(ptr));
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: return Put(data, 1);
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: return Put<unsigned long long>(data, r.base);
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: return Put(data, r.managed ? 1 : 0);
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: return Put(data, device);
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: return Put(data, r.vmm ? 0 : 1);
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: return Put(data, static_cast<CUdeviceptr>(r.base));
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: return Put(data, r.size);
    case CU_POINTER_ATTRIBUTE_MAPPED: return Put(data, 1);
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: return Put<unsigned long long>(data, 0);
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: return Put(data, 0);
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: return Put<unsigned>(data, CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: return Put<CUmemoryPool>(data, nullptr);
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

// What the plural query reports for an address no allocation contains: null, zero, or device
// ordinal -2, each written at the attribute's own width.
CUresult Unregistered(void* data, CUpointer_attribute attribute) {
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: return Put<uint64_t>(data, 0);
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: return Put(data, -2);
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return CUDA_ERROR_INVALID_VALUE;
    default: return Put(data, 0);
  }
}

}  // namespace
}  // namespace ncclsim::driver

namespace drv = ncclsim::driver;

// An address no allocation contains is CUDA_ERROR_INVALID_VALUE, as for unregistered host memory.
NCCLSIM_DRIVER_EXPORT CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  drv::Range range;
  if (!drv::FindRange(ptr, &range)) return CUDA_ERROR_INVALID_VALUE;
  return drv::Attribute(data, attribute, ptr, range);
}
// The plural form succeeds for unknown addresses, reporting them as unregistered (type 0, null
// context), as cuda.h documents.
NCCLSIM_DRIVER_EXPORT CUresult cuPointerGetAttributes(unsigned int count, CUpointer_attribute* attributes,
                                                      void** data, CUdeviceptr ptr) {
  if (count == 0 || attributes == nullptr || data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  drv::Range range;
  const bool known = drv::FindRange(ptr, &range);
  for (unsigned i = 0; i < count; ++i) {
    if (data[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = known ? drv::Attribute(data[i], attributes[i], ptr, range) : drv::Unregistered(data[i], attributes[i]);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr ptr) {
  drv::Range range;
  if (!drv::FindRange(ptr, &range)) return CUDA_ERROR_NOT_FOUND;
  if (base != nullptr) *base = static_cast<CUdeviceptr>(range.base);
  if (size != nullptr) *size = range.size;
  return CUDA_SUCCESS;
}
