// Virtual memory management (cuMem* VMM) backed by host memory.
//
// A physical allocation (cuMemCreate) is a memfd of the requested size. A reservation
// (cuMemAddressReserve) is an anonymous PROT_NONE, MAP_NORESERVE mapping, so reserving 80 GiB costs
// no memory. cuMemMap maps the memfd over part of a reservation with MAP_FIXED (still PROT_NONE);
// cuMemSetAccess makes it readable/writable with mprotect, as CUDA requires an explicit
// cuMemSetAccess before the memory is usable. cuMemUnmap puts the PROT_NONE reservation back.
// A physical allocation lives until every reference is released and nothing maps it.
#ifndef NCCLWATCH_SIM_DRIVER_VMM_H_
#define NCCLWATCH_SIM_DRIVER_VMM_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "driver_api.h"

namespace ncclsim::driver {

// Minimum and recommended granularity: 2 MiB, as on an H100.
constexpr size_t kVmmGranularity = size_t{2} << 20;

struct MappedRange {
  uintptr_t base = 0;
  size_t size = 0;
  CUmemGenericAllocationHandle handle = 0;
  int device = 0;
};

class Vmm {
 public:
  static Vmm& Get();

  CUresult Create(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp& prop);
  CUresult Release(CUmemGenericAllocationHandle handle);
  // cuMemRetainAllocationHandle: the handle mapped at `address`, with one more reference.
  CUresult Retain(uintptr_t address, CUmemGenericAllocationHandle* handle);
  CUresult Reserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr hint);
  CUresult Free(CUdeviceptr ptr, size_t size);
  CUresult Map(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle);
  CUresult Unmap(CUdeviceptr ptr, size_t size);
  CUresult SetAccess(CUdeviceptr ptr, size_t size, int prot);
  CUresult Properties(CUmemGenericAllocationHandle handle, CUmemAllocationProp* prop);
  // The mapping that contains `address`; false if none.
  bool FindMapping(uintptr_t address, MappedRange* out);

 private:
  struct Physical {
    int fd = -1;
    size_t size = 0;
    CUmemAllocationProp prop{};
    int refs = 1;  // cuMemCreate and each cuMemRetainAllocationHandle; cuMemRelease drops one
    int mappings = 0;
  };
  struct Mapping {
    size_t size = 0;
    CUmemGenericAllocationHandle handle = 0;
  };
  Vmm() = default;
  // The reservation that holds [ptr, ptr + size), or null.
  const std::pair<const uintptr_t, size_t>* ReservationOf(uintptr_t ptr, size_t size) const;
  bool OverlapsMapping(uintptr_t ptr, size_t size) const;
  // True if [ptr, ptr + size) is exactly covered by mappings, without gaps.
  bool FullyMapped(uintptr_t ptr, size_t size) const;
  // Closes the memfd once every reference is released and nothing maps it.
  void MaybeDestroyLocked(CUmemGenericAllocationHandle handle);

  std::mutex mu_;
  std::map<CUmemGenericAllocationHandle, Physical> physical_;
  std::map<uintptr_t, size_t> reservations_;  // base -> size
  std::map<uintptr_t, Mapping> mappings_;     // base -> mapping
  CUmemGenericAllocationHandle next_handle_ = 1;
};

}  // namespace ncclsim::driver

#endif  // NCCLWATCH_SIM_DRIVER_VMM_H_
