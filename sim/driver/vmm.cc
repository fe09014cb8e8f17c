#include "vmm.h"

#include <sys/mman.h>
#include <unistd.h>

namespace ncclsim::driver {
namespace {

bool Aligned(uintptr_t value) { return value % kVmmGranularity == 0; }

void* MapReservation(void* where, size_t size, int extra_flags) {
  return mmap(where, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | extra_flags, -1, 0);
}

}  // namespace

Vmm& Vmm::Get() {
  static Vmm* instance = new Vmm();  // never destroyed: memory may be in use during exit
  return *instance;
}

CUresult Vmm::Create(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp& prop) {
  if (size == 0 || !Aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  const int fd = memfd_create("ncclsim-cuMemCreate", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  std::lock_guard lock(mu_);
  *handle = next_handle_++;
  physical_[*handle] = Physical{fd, size, prop, 1, 0};
  return CUDA_SUCCESS;
}

CUresult Vmm::Release(CUmemGenericAllocationHandle handle) {
  std::lock_guard lock(mu_);
  auto it = physical_.find(handle);
  if (it == physical_.end() || it->second.refs == 0) return CUDA_ERROR_INVALID_VALUE;
  --it->second.refs;
  MaybeDestroyLocked(handle);
  return CUDA_SUCCESS;
}

CUresult Vmm::Retain(uintptr_t address, CUmemGenericAllocationHandle* handle) {
  std::lock_guard lock(mu_);
  auto it = mappings_.find(address);
  if (it == mappings_.end()) return CUDA_ERROR_INVALID_VALUE;
  *handle = it->second.handle;
  ++physical_[*handle].refs;
  return CUDA_SUCCESS;
}

void Vmm::MaybeDestroyLocked(CUmemGenericAllocationHandle handle) {
  auto it = physical_.find(handle);
  if (it == physical_.end() || it->second.refs > 0 || it->second.mappings > 0) return;
  close(it->second.fd);
  physical_.erase(it);
}

CUresult Vmm::Reserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr hint) {
  if (size == 0 || !Aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  if (alignment == 0) alignment = kVmmGranularity;
  if (alignment % kVmmGranularity != 0 || (alignment & (alignment - 1)) != 0) return CUDA_ERROR_INVALID_VALUE;
  // Over-reserve by the alignment, then trim both ends. The hint is only a hint, as in CUDA.
  void* raw = MapReservation(reinterpret_cast<void*>(hint), size + alignment, 0);
  if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t base = (start + alignment - 1) & ~(uintptr_t{alignment} - 1);
  if (base > start) munmap(raw, base - start);
  const uintptr_t tail = start + size + alignment - (base + size);
  if (tail > 0) munmap(reinterpret_cast<void*>(base + size), tail);
  std::lock_guard lock(mu_);
  reservations_[base] = size;
  *ptr = static_cast<CUdeviceptr>(base);
  return CUDA_SUCCESS;
}

CUresult Vmm::Free(CUdeviceptr ptr, size_t size) {
  std::lock_guard lock(mu_);
  auto it = reservations_.find(static_cast<uintptr_t>(ptr));
  if (it == reservations_.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
  if (OverlapsMapping(it->first, size)) return CUDA_ERROR_INVALID_VALUE;  // unmap first, as in CUDA
  munmap(reinterpret_cast<void*>(it->first), size);
  reservations_.erase(it);
  return CUDA_SUCCESS;
}

const std::pair<const uintptr_t, size_t>* Vmm::ReservationOf(uintptr_t ptr, size_t size) const {
  auto it = reservations_.upper_bound(ptr);
  if (it == reservations_.begin()) return nullptr;
  --it;
  return ptr + size <= it->first + it->second ? &*it : nullptr;
}

bool Vmm::OverlapsMapping(uintptr_t ptr, size_t size) const {
  auto it = mappings_.lower_bound(ptr);
  if (it != mappings_.end() && it->first < ptr + size) return true;
  if (it == mappings_.begin()) return false;
  --it;
  return it->first + it->second.size > ptr;
}

bool Vmm::FullyMapped(uintptr_t ptr, size_t size) const {
  uintptr_t cursor = ptr;
  while (cursor < ptr + size) {
    auto it = mappings_.upper_bound(cursor);
    if (it == mappings_.begin()) return false;
    --it;
    if (it->first + it->second.size <= cursor) return false;
    cursor = it->first + it->second.size;
  }
  return true;
}

CUresult Vmm::Map(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle) {
  const uintptr_t base = static_cast<uintptr_t>(ptr);
  if (size == 0 || !Aligned(base) || !Aligned(size) || !Aligned(offset)) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(mu_);
  auto phys = physical_.find(handle);
  if (phys == physical_.end() || phys->second.refs == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (offset + size > phys->second.size || ReservationOf(base, size) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (OverlapsMapping(base, size)) return CUDA_ERROR_ALREADY_MAPPED;
  void* got = mmap(reinterpret_cast<void*>(base), size, PROT_NONE, MAP_SHARED | MAP_FIXED, phys->second.fd,
                   static_cast<off_t>(offset));
  if (got == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  mappings_[base] = Mapping{size, handle};
  ++phys->second.mappings;
  return CUDA_SUCCESS;
}

// Unmaps every mapping inside [ptr, ptr + size); a range that cuts a mapping is refused.
CUresult Vmm::Unmap(CUdeviceptr ptr, size_t size) {
  const uintptr_t base = static_cast<uintptr_t>(ptr);
  std::lock_guard lock(mu_);
  auto first = mappings_.find(base);
  if (first == mappings_.end() || !FullyMapped(base, size)) return CUDA_ERROR_INVALID_VALUE;
  auto last = mappings_.lower_bound(base + size);
  for (auto it = first; it != last; ++it) {
    if (it->first + it->second.size > base + size) return CUDA_ERROR_INVALID_VALUE;
  }
  for (auto it = first; it != last;) {
    MapReservation(reinterpret_cast<void*>(it->first), it->second.size, MAP_FIXED);
    const CUmemGenericAllocationHandle handle = it->second.handle;
    it = mappings_.erase(it);
    --physical_[handle].mappings;
    MaybeDestroyLocked(handle);
  }
  return CUDA_SUCCESS;
}

CUresult Vmm::SetAccess(CUdeviceptr ptr, size_t size, int prot) {
  const uintptr_t base = static_cast<uintptr_t>(ptr);
  std::lock_guard lock(mu_);
  if (size == 0 || !FullyMapped(base, size)) return CUDA_ERROR_INVALID_VALUE;
  return mprotect(reinterpret_cast<void*>(base), size, prot) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult Vmm::Properties(CUmemGenericAllocationHandle handle, CUmemAllocationProp* prop) {
  std::lock_guard lock(mu_);
  auto it = physical_.find(handle);
  if (it == physical_.end()) return CUDA_ERROR_INVALID_HANDLE;
  *prop = it->second.prop;
  return CUDA_SUCCESS;
}

bool Vmm::FindMapping(uintptr_t address, MappedRange* out) {
  std::lock_guard lock(mu_);
  auto it = mappings_.upper_bound(address);
  if (it == mappings_.begin()) return false;
  --it;
  if (it->first + it->second.size <= address) return false;
  auto phys = physical_.find(it->second.handle);
  *out = MappedRange{it->first, it->second.size, it->second.handle,
                     phys == physical_.end() ? 0 : phys->second.prop.location.id};
  return true;
}

}  // namespace ncclsim::driver
