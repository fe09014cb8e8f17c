// Virtual memory management entry points (see vmm.h for how they map to host memory).
#include <sys/mman.h>

#include "driver_api.h"
#include "vmm.h"

namespace ncclsim::driver {
namespace {

CUresult CheckProp(const CUmemAllocationProp* prop) {
  if (prop == nullptr || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  return CheckDevice(prop->location.id) == CUDA_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

// The strongest protection any descriptor grants; every location must be a valid device.
CUresult Protection(const CUmemAccessDesc* desc, size_t count, int* prot) {
  if (desc == nullptr || count == 0) return CUDA_ERROR_INVALID_VALUE;
  *prot = PROT_NONE;
  for (size_t i = 0; i < count; ++i) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    if (CheckDevice(desc[i].location.id) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_DEVICE;
    switch (desc[i].flags) {
      case CU_MEM_ACCESS_FLAGS_PROT_NONE: break;
      case CU_MEM_ACCESS_FLAGS_PROT_READ: *prot |= PROT_READ; break;
      case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: *prot |= PROT_READ | PROT_WRITE; break;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace ncclsim::driver

using ncclsim::driver::Vmm;

NCCLSIM_DRIVER_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                           const CUmemAllocationProp* prop, unsigned long long flags) {
  if (handle == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = ncclsim::driver::CheckProp(prop); r != CUDA_SUCCESS) return r;
  return Vmm::Get().Create(handle, size, *prop);
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  return Vmm::Get().Release(handle);
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment,
                                                   CUdeviceptr hint, unsigned long long flags) {
  if (ptr == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return Vmm::Get().Reserve(ptr, size, alignment, hint);
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) { return Vmm::Get().Free(ptr, size); }
NCCLSIM_DRIVER_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                        CUmemGenericAllocationHandle handle, unsigned long long flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return Vmm::Get().Map(ptr, size, offset, handle);
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) { return Vmm::Get().Unmap(ptr, size); }
NCCLSIM_DRIVER_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc,
                                              size_t count) {
  int prot = PROT_NONE;
  if (CUresult r = ncclsim::driver::Protection(desc, count, &prot); r != CUDA_SUCCESS) return r;
  return Vmm::Get().SetAccess(ptr, size, prot);
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                                             CUmemAllocationGranularity_flags option) {
  if (granularity == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (CUresult r = ncclsim::driver::CheckProp(prop); r != CUDA_SUCCESS) return r;
  *granularity = ncclsim::driver::kVmmGranularity;
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                                      CUmemGenericAllocationHandle handle) {
  if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return Vmm::Get().Properties(handle, prop);
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* address) {
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return Vmm::Get().Retain(reinterpret_cast<uintptr_t>(address), handle);
}
