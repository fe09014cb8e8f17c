// Registry of memory handed out by cudaMalloc* (all of it ordinary host memory) and of host
// ranges registered with cudaHostRegister, so that cudaFree* can reject foreign pointers,
// cudaPointerGetAttributes can classify them and cudaMemGetInfo can account device usage.
#ifndef NCCLWATCH_SIM_CUDART_ALLOCATIONS_H_
#define NCCLWATCH_SIM_CUDART_ALLOCATIONS_H_

#include <cuda_runtime_api.h>

#include <cstddef>

namespace ncclsim {

// Where an allocation came from: cudaMalloc/cudaMallocManaged/cudaMallocHost, a device's memory
// pool (cudaMallocAsync), or a caller's range registered with cudaHostRegister (never freed here).
enum class AllocationOrigin { kDirect, kPool, kHostRegister };

struct Allocation {
  void* base = nullptr;
  size_t size = 0;
  cudaMemoryType type = cudaMemoryTypeUnregistered;
  int device = -1;
  AllocationOrigin origin = AllocationOrigin::kDirect;
};

// Returns null when out of memory. Device and managed memory with device >= 0 count against it.
void* Allocate(size_t size, cudaMemoryType type, int device,
               AllocationOrigin origin = AllocationOrigin::kDirect);
// False if `ptr` is not the base of an allocation of one of `types` (types is a bit mask of
// 1 << cudaMemoryType). Registered host ranges are never released here.
bool Release(void* ptr, unsigned types);
// The allocation containing `ptr`; type cudaMemoryTypeUnregistered if none.
Allocation Find(const void* ptr);

// cudaHostRegister: false if [ptr, ptr + size) overlaps a registered range or an allocation.
bool RegisterHostRange(void* ptr, size_t size);
// cudaHostUnregister: false if `ptr` is not the base of a registered range.
bool UnregisterHostRange(void* ptr);

struct DeviceUsage {
  size_t bytes = 0;       // device and managed memory allocated on the device, pools included
  size_t pool_bytes = 0;  // of which from the device's memory pool
  size_t pool_high = 0;   // the pool's high-water mark since the last reset
};
DeviceUsage UsageOf(int device);
// Sets the pool's high-water mark to its current use (cudaMemPoolAttrUsedMemHigh := 0).
void ResetPoolHighWatermark(int device);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_ALLOCATIONS_H_
