// Function attributes and occupancy, answered from the device profile as if every kernel used
// 32 registers per thread and no static shared memory: the numbers jobs size launches with.
// cudaFuncSetAttribute settings are remembered per function (for every device).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "api_common.h"
#include "device_profile.h"

namespace ncclsim {
namespace {

constexpr int kRegistersPerThread = 32;

struct FunctionSettings {
  int max_dynamic_shared = -1;  // -1: the profile's shared memory per block
  int preferred_carveout = -1;  // cudaSharedmemCarveoutDefault
  int non_portable_cluster_size_allowed = 0;
  int cluster_scheduling_policy = 0;
};

std::mutex settings_mu;
std::map<const void*, FunctionSettings>& Settings() {
  static auto* settings = new std::map<const void*, FunctionSettings>();
  return *settings;
}

FunctionSettings SettingsOf(const void* func) {
  std::lock_guard<std::mutex> lock(settings_mu);
  auto it = Settings().find(func);
  return it == Settings().end() ? FunctionSettings{} : it->second;
}

int MaxDynamicShared(const FunctionSettings& s) {
  return s.max_dynamic_shared >= 0 ? s.max_dynamic_shared : ActiveProfile().shared_per_block;
}

cudaError_t GetAttributes(cudaFuncAttributes* attr, const void* func) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (attr == nullptr) return cudaErrorInvalidValue;
  if (func == nullptr) return cudaErrorInvalidDeviceFunction;
  const DeviceProfile& p = ActiveProfile();
  const FunctionSettings s = SettingsOf(func);
  std::memset(attr, 0, sizeof(*attr));
  attr->maxThreadsPerBlock = p.threads_per_block;
  attr->numRegs = kRegistersPerThread;
  attr->ptxVersion = attr->binaryVersion = p.compute_major * 10 + p.compute_minor;
  attr->maxDynamicSharedSizeBytes = MaxDynamicShared(s);
  attr->preferredShmemCarveout = s.preferred_carveout;
  attr->nonPortableClusterSizeAllowed = s.non_portable_cluster_size_allowed;
  attr->clusterSchedulingPolicyPreference = s.cluster_scheduling_policy;
  return cudaSuccess;
}

// Checks `value` for `attr` and stores it; the cluster shape is fixed at compile time.
cudaError_t ApplySetting(FunctionSettings* s, cudaFuncAttribute attr, int value) {
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      if (value < 0 || value > ActiveProfile().shared_per_block_optin) return cudaErrorInvalidValue;
      s->max_dynamic_shared = value;
      return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
      if (value < -1 || value > 100) return cudaErrorInvalidValue;
      s->preferred_carveout = value;
      return cudaSuccess;
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
      if (value != 0 && value != 1) return cudaErrorInvalidValue;
      s->non_portable_cluster_size_allowed = value;
      return cudaSuccess;
    case cudaFuncAttributeClusterSchedulingPolicyPreference:
      if (value < cudaClusterSchedulingPolicyDefault || value > cudaClusterSchedulingPolicyLoadBalancing) {
        return cudaErrorInvalidValue;
      }
      s->cluster_scheduling_policy = value;
      return cudaSuccess;
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t SetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (func == nullptr) return cudaErrorInvalidDeviceFunction;
  std::lock_guard<std::mutex> lock(settings_mu);
  FunctionSettings s = Settings()[func];
  if (cudaError_t e = ApplySetting(&s, attr, value); e != cudaSuccess) return e;
  Settings()[func] = s;
  return cudaSuccess;
}

// Blocks of `block_size` threads resident on one multiprocessor: limited by blocks, threads
// (whole warps), registers and shared memory per multiprocessor.
int ResidentBlocks(int block_size, size_t dynamic_shared) {
  const DeviceProfile& p = ActiveProfile();
  const int warps = (block_size + p.warp_size - 1) / p.warp_size;
  const int threads = warps * p.warp_size;
  int blocks = std::min(p.blocks_per_multiprocessor, p.threads_per_multiprocessor / threads);
  blocks = std::min(blocks, p.registers_per_multiprocessor / (threads * kRegistersPerThread));
  const size_t shared = dynamic_shared + static_cast<size_t>(p.reserved_shared_per_block);
  return std::min(blocks, static_cast<int>(static_cast<size_t>(p.shared_per_multiprocessor) / shared));
}

cudaError_t MaxActiveBlocks(int* blocks, const void* func, int block_size, size_t dynamic_shared, unsigned flags) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (blocks == nullptr || block_size <= 0 || (flags & ~cudaOccupancyDisableCachingOverride) != 0) {
    return cudaErrorInvalidValue;
  }
  if (func == nullptr) return cudaErrorInvalidDeviceFunction;
  const bool fits = block_size <= ActiveProfile().threads_per_block &&
                    dynamic_shared <= static_cast<size_t>(MaxDynamicShared(SettingsOf(func)));
  *blocks = fits ? ResidentBlocks(block_size, dynamic_shared) : 0;
  return cudaSuccess;
}

}  // namespace
}  // namespace ncclsim

using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  return Report(ncclsim::GetAttributes(attr, func));
}
NCCLSIM_EXPORT cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  return Report(ncclsim::SetAttribute(func, attr, value));
}
NCCLSIM_EXPORT cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel, cudaFuncAttribute attr, int value,
                                                           int device) {
  if (cudaError_t e = ncclsim::CheckDevice(device); e != cudaSuccess) return Report(e);
  return Report(ncclsim::SetAttribute(kernel, attr, value));
}
NCCLSIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func,
                                                                         int block_size, size_t dynamic_shared) {
  return Report(ncclsim::MaxActiveBlocks(blocks, func, block_size, dynamic_shared, cudaOccupancyDefault));
}
NCCLSIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* func,
                                                                                  int block_size,
                                                                                  size_t dynamic_shared,
                                                                                  unsigned int flags) {
  return Report(ncclsim::MaxActiveBlocks(blocks, func, block_size, dynamic_shared, flags));
}
