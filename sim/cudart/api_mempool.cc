// Stream-ordered allocation and memory accounting: cudaMallocAsync/cudaFreeAsync on each
// device's default memory pool, the pool's attributes, cudaMemGetInfo and the graph-memory
// attributes. Pool memory is ordinary host memory allocated at once; a free takes effect when
// the stream reaches it. The sim keeps nothing in reserve, so reserved memory equals used memory
// and trimming has nothing to do.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "allocations.h"
#include "api_common.h"
#include "capture.h"
#include "device_profile.h"

namespace ncclsim {
namespace {

constexpr unsigned kDeviceTypes = (1u << cudaMemoryTypeDevice) | (1u << cudaMemoryTypeManaged);

// One default pool per device; the settable attributes only round-trip.
struct MemPool {
  int device = 0;
  std::mutex mu;
  uint64_t release_threshold = 0;
  int reuse_follow_event_dependencies = 1;
  int reuse_allow_opportunistic = 1;
  int reuse_allow_internal_dependencies = 1;
};

std::vector<MemPool>& Pools() {
  static auto* pools = [] {
    auto* p = new std::vector<MemPool>(static_cast<size_t>(Runtime::Get().device_count()));
    for (size_t i = 0; i < p->size(); ++i) (*p)[i].device = static_cast<int>(i);
    return p;
  }();
  return *pools;
}

MemPool* LookupPool(cudaMemPool_t handle) {
  for (MemPool& p : Pools()) {
    if (reinterpret_cast<cudaMemPool_t>(&p) == handle) return &p;
  }
  return nullptr;
}

cudaError_t MallocAsync(void** out, size_t size, cudaStream_t handle) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, DefaultStream::kLegacy, &s); e != cudaSuccess) return e;
  if (out == nullptr) return cudaErrorInvalidValue;
  // A capture would need a memory allocation node, which the sim has not.
  if (cudaError_t e = cudaSuccess; Captures::Get().Refuse(*s, &e)) return e;
  *out = Allocate(size, cudaMemoryTypeDevice, s->device(), AllocationOrigin::kPool);
  return *out ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t FreeAsync(void* ptr, cudaStream_t handle) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, DefaultStream::kLegacy, &s); e != cudaSuccess) return e;
  if (ptr == nullptr) return cudaSuccess;
  const Allocation a = Find(ptr);
  if (a.base != ptr || (kDeviceTypes & (1u << a.type)) == 0) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaSuccess; Captures::Get().Refuse(*s, &e)) return e;  // no memory free nodes either
  return Runtime::Get().Submit(s, MakeAction(cudaGraphNodeTypeMemFree, [ptr] { Release(ptr, kDeviceTypes); }),
                               /*trivial=*/true);
}

cudaError_t MemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  const int device = Runtime::current_device();
  if (cudaError_t e = CheckDevice(device); e != cudaSuccess) return e;
  if (free_bytes == nullptr || total_bytes == nullptr) return cudaErrorInvalidValue;
  *total_bytes = ActiveProfile().memory_bytes;
  const size_t used = UsageOf(device).bytes;
  *free_bytes = used < *total_bytes ? *total_bytes - used : 0;
  return cudaSuccess;
}

cudaError_t DefaultMemPool(cudaMemPool_t* pool, int device) {
  if (cudaError_t e = CheckDevice(device); e != cudaSuccess) return e;
  if (pool == nullptr) return cudaErrorInvalidValue;
  *pool = reinterpret_cast<cudaMemPool_t>(&Pools()[static_cast<size_t>(device)]);
  return cudaSuccess;
}

cudaError_t GetPoolAttribute(cudaMemPool_t handle, cudaMemPoolAttr attr, void* value) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  MemPool* pool = LookupPool(handle);
  if (pool == nullptr || value == nullptr) return cudaErrorInvalidValue;
  const DeviceUsage usage = UsageOf(pool->device);
  std::lock_guard<std::mutex> lock(pool->mu);
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: *static_cast<int*>(value) = pool->reuse_follow_event_dependencies; break;
    case cudaMemPoolReuseAllowOpportunistic: *static_cast<int*>(value) = pool->reuse_allow_opportunistic; break;
    case cudaMemPoolReuseAllowInternalDependencies:
      *static_cast<int*>(value) = pool->reuse_allow_internal_dependencies;
      break;
    case cudaMemPoolAttrReleaseThreshold: *static_cast<uint64_t*>(value) = pool->release_threshold; break;
    case cudaMemPoolAttrReservedMemCurrent:
    case cudaMemPoolAttrUsedMemCurrent: *static_cast<uint64_t*>(value) = usage.pool_bytes; break;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh: *static_cast<uint64_t*>(value) = usage.pool_high; break;
    default: return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

cudaError_t SetPoolAttribute(cudaMemPool_t handle, cudaMemPoolAttr attr, void* value) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  MemPool* pool = LookupPool(handle);
  if (pool == nullptr || value == nullptr) return cudaErrorInvalidValue;
  std::lock_guard<std::mutex> lock(pool->mu);
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: pool->reuse_follow_event_dependencies = *static_cast<int*>(value); break;
    case cudaMemPoolReuseAllowOpportunistic: pool->reuse_allow_opportunistic = *static_cast<int*>(value); break;
    case cudaMemPoolReuseAllowInternalDependencies:
      pool->reuse_allow_internal_dependencies = *static_cast<int*>(value);
      break;
    case cudaMemPoolAttrReleaseThreshold: pool->release_threshold = *static_cast<uint64_t*>(value); break;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh:
      // The high-water marks can only be reset, by setting 0.
      if (*static_cast<uint64_t*>(value) != 0) return cudaErrorInvalidValue;
      ResetPoolHighWatermark(pool->device);
      break;
    default: return cudaErrorInvalidValue;  // the current sizes are read-only
  }
  return cudaSuccess;
}

cudaError_t SetPoolAccess(cudaMemPool_t handle, const cudaMemAccessDesc* descs, size_t count) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (LookupPool(handle) == nullptr || (count != 0 && descs == nullptr)) return cudaErrorInvalidValue;
  for (size_t i = 0; i < count; ++i) {
    const cudaMemAccessDesc& d = descs[i];
    if (d.location.type != cudaMemLocationTypeDevice) return cudaErrorInvalidValue;
    if (cudaError_t e = CheckDevice(d.location.id); e != cudaSuccess) return cudaErrorInvalidDevice;
    if (d.flags != cudaMemAccessFlagsProtNone && d.flags != cudaMemAccessFlagsProtRead &&
        d.flags != cudaMemAccessFlagsProtReadWrite) {
      return cudaErrorInvalidValue;
    }
  }
  return cudaSuccess;  // every device already reaches every pool: it is all host memory
}

// Graphs allocate nothing in the sim, so graph memory is always 0; the high marks reset to 0.
cudaError_t GraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value, bool set) {
  if (cudaError_t e = CheckDevice(device); e != cudaSuccess) return e;
  if (value == nullptr) return cudaErrorInvalidValue;
  const bool high = attr == cudaGraphMemAttrUsedMemHigh || attr == cudaGraphMemAttrReservedMemHigh;
  const bool current = attr == cudaGraphMemAttrUsedMemCurrent || attr == cudaGraphMemAttrReservedMemCurrent;
  if (!set) {
    if (!high && !current) return cudaErrorInvalidValue;
    *static_cast<uint64_t*>(value) = 0;
    return cudaSuccess;
  }
  return high && *static_cast<uint64_t*>(value) == 0 ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace
}  // namespace ncclsim

using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t s) {
  return Report(ncclsim::MallocAsync(ptr, size, s));
}
NCCLSIM_EXPORT cudaError_t cudaFreeAsync(void* ptr, cudaStream_t s) { return Report(ncclsim::FreeAsync(ptr, s)); }
NCCLSIM_EXPORT cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  return Report(ncclsim::MemGetInfo(free_bytes, total_bytes));
}
NCCLSIM_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  return Report(ncclsim::DefaultMemPool(pool, device));
}
NCCLSIM_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  return Report(ncclsim::GetPoolAttribute(pool, attr, value));
}
NCCLSIM_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  return Report(ncclsim::SetPoolAttribute(pool, attr, value));
}
NCCLSIM_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  return Report(ncclsim::LookupPool(pool) ? cudaSuccess : cudaErrorInvalidValue);
}
NCCLSIM_EXPORT cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descs, size_t count) {
  return Report(ncclsim::SetPoolAccess(pool, descs, count));
}
NCCLSIM_EXPORT cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value) {
  return Report(ncclsim::GraphMemAttribute(device, attr, value, /*set=*/false));
}
NCCLSIM_EXPORT cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value) {
  return Report(ncclsim::GraphMemAttribute(device, attr, value, /*set=*/true));
}
