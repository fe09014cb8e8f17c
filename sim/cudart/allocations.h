// Registry of memory handed out by cudaMalloc* (all of it ordinary host memory), so that
// cudaFree* can reject foreign pointers and cudaPointerGetAttributes can classify them.
#ifndef NCCLWATCH_SIM_CUDART_ALLOCATIONS_H_
#define NCCLWATCH_SIM_CUDART_ALLOCATIONS_H_

#include <cuda_runtime_api.h>

#include <cstddef>

namespace ncclsim {

struct Allocation {
  void* base = nullptr;
  size_t size = 0;
  cudaMemoryType type = cudaMemoryTypeUnregistered;
  int device = -1;
};

// Returns null when out of memory.
void* Allocate(size_t size, cudaMemoryType type, int device);
// False if `ptr` is not the base of an allocation of one of `types` (types is a bit mask of
// 1 << cudaMemoryType).
bool Release(void* ptr, unsigned types);
// The allocation containing `ptr`; type cudaMemoryTypeUnregistered if none.
Allocation Find(const void* ptr);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_ALLOCATIONS_H_
