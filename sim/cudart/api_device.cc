// Device and version entry points. Devices are numbered 0..NCCLSIM_DEVICES-1 and identical.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

#include "api_common.h"

namespace ncclsim {
namespace {

constexpr int kCudaVersion = 13000;
constexpr size_t kDeviceMemoryBytes = size_t{80} << 30;
constexpr int kComputeMajor = 9;
constexpr int kComputeMinor = 0;
constexpr int kMultiProcessors = 132;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kSharedMemPerBlock = 48 << 10;

cudaError_t CheckDevice(int device) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  const int count = Runtime::Get().device_count();
  if (count == 0) return cudaErrorNoDevice;
  return device >= 0 && device < count ? cudaSuccess : cudaErrorInvalidDevice;
}

void FillProperties(cudaDeviceProp* p, int device) {
  std::memset(p, 0, sizeof(*p));
  std::snprintf(p->name, sizeof(p->name), "ncclsim CPU device %d", device);
  p->uuid.bytes[0] = static_cast<char>(device + 1);
  p->totalGlobalMem = kDeviceMemoryBytes;
  p->sharedMemPerBlock = kSharedMemPerBlock;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = kMaxThreadsPerBlock;
  p->maxThreadsDim[0] = p->maxThreadsDim[1] = kMaxThreadsPerBlock;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 0x7fffffff;
  p->maxGridSize[1] = p->maxGridSize[2] = 65535;
  p->totalConstMem = 64 << 10;
  p->major = kComputeMajor;
  p->minor = kComputeMinor;
  p->multiProcessorCount = kMultiProcessors;
  p->pciBusID = device;
  p->pciDeviceID = 0;
  p->pciDomainID = 0;
  p->asyncEngineCount = 2;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 << 20;
  p->managedMemory = 1;
  p->concurrentManagedAccess = 1;
}

cudaError_t Attribute(int* value, cudaDeviceAttr attr, int device) {
  if (cudaError_t e = CheckDevice(device); e != cudaSuccess) return e;
  if (value == nullptr) return cudaErrorInvalidValue;
  switch (attr) {
    case cudaDevAttrComputeCapabilityMajor: *value = kComputeMajor; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = kComputeMinor; return cudaSuccess;
    case cudaDevAttrMultiProcessorCount: *value = kMultiProcessors; return cudaSuccess;
    case cudaDevAttrWarpSize: *value = 32; return cudaSuccess;
    case cudaDevAttrMaxThreadsPerBlock: *value = kMaxThreadsPerBlock; return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = kSharedMemPerBlock; return cudaSuccess;
    case cudaDevAttrPciBusId: *value = device; return cudaSuccess;
    case cudaDevAttrPciDeviceId: *value = 0; return cudaSuccess;
    case cudaDevAttrPciDomainId: *value = 0; return cudaSuccess;
    case cudaDevAttrUnifiedAddressing: *value = 1; return cudaSuccess;
    case cudaDevAttrManagedMemory: *value = 1; return cudaSuccess;
    case cudaDevAttrConcurrentManagedAccess: *value = 1; return cudaSuccess;
    case cudaDevAttrAsyncEngineCount: *value = 2; return cudaSuccess;
    case cudaDevAttrIntegrated: *value = 0; return cudaSuccess;
    case cudaDevAttrCooperativeLaunch: *value = 1; return cudaSuccess;
    case cudaDevAttrMemoryPoolsSupported: *value = 0; return cudaSuccess;
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace
}  // namespace ncclsim

using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  if (count == nullptr) return Report(cudaErrorInvalidValue);
  *count = ncclsim::Runtime::Get().device_count();
  return Report(*count == 0 ? cudaErrorNoDevice : cudaSuccess);
}
NCCLSIM_EXPORT cudaError_t cudaSetDevice(int device) {
  if (cudaError_t e = ncclsim::CheckDevice(device); e != cudaSuccess) return Report(e);
  ncclsim::Runtime::set_current_device(device);
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGetDevice(int* device) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  if (device == nullptr) return Report(cudaErrorInvalidValue);
  if (ncclsim::Runtime::Get().device_count() == 0) return Report(cudaErrorNoDevice);
  *device = ncclsim::Runtime::current_device();
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (cudaError_t e = ncclsim::CheckDevice(device); e != cudaSuccess) return Report(e);
  if (prop == nullptr) return Report(cudaErrorInvalidValue);
  ncclsim::FillProperties(prop, device);
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  return Report(ncclsim::Attribute(value, attr, device));
}
NCCLSIM_EXPORT cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return Report(cudaErrorInvalidValue);
  *version = ncclsim::kCudaVersion;
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return Report(cudaErrorInvalidValue);
  *version = ncclsim::kCudaVersion;
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaDeviceSynchronize(void) {
  const int device = ncclsim::Runtime::current_device();
  if (cudaError_t e = ncclsim::CheckDevice(device); e != cudaSuccess) return Report(e);
  if (ncclsim::Runtime::Get().LegacyStreamProhibited()) return Report(cudaErrorStreamCaptureUnsupported);
  ncclsim::Runtime::Get().SynchronizeDevice(device);
  return cudaSuccess;
}
// Waits for the device's work; allocations are kept (the sim has no per-device heaps).
NCCLSIM_EXPORT cudaError_t cudaDeviceReset(void) {
  const int device = ncclsim::Runtime::current_device();
  if (cudaError_t e = ncclsim::CheckDevice(device); e != cudaSuccess) return Report(e);
  ncclsim::Runtime::Get().SynchronizeDevice(device);
  return cudaSuccess;
}
