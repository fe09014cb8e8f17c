// Device and version entry points. Devices are numbered 0..NCCLSIM_DEVICES-1 and identical;
// what they look like is the active device profile (device_profile.h).
#include <cuda_runtime_api.h>

#include "api_common.h"
#include "capture.h"
#include "call_count.h"
#include "device_profile.h"

namespace ncclsim {
namespace {

constexpr int kCudaVersion = 13000;

cudaError_t Attribute(int* value, cudaDeviceAttr attr, int device) {
  if (cudaError_t e = CheckDevice(device); e != cudaSuccess) return e;
  return DeviceAttributeValue(attr, device, value);
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
  ncclsim::CountCall();
  if (cudaError_t e = ncclsim::CheckDevice(device); e != cudaSuccess) return Report(e);
  ncclsim::Runtime::set_current_device(device);
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGetDevice(int* device) {
  ncclsim::CountCall();
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  if (device == nullptr) return Report(cudaErrorInvalidValue);
  if (ncclsim::Runtime::Get().device_count() == 0) return Report(cudaErrorNoDevice);
  *device = ncclsim::Runtime::current_device();
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (cudaError_t e = ncclsim::CheckDevice(device); e != cudaSuccess) return Report(e);
  if (prop == nullptr) return Report(cudaErrorInvalidValue);
  ncclsim::FillDeviceProperties(device, prop);
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
  if (cudaError_t e = ncclsim::Captures::Get().CheckUnsafeCall(); e != cudaSuccess) return Report(e);
  if (cudaError_t e = ncclsim::Captures::Get().CheckDeviceSync(device); e != cudaSuccess) return Report(e);
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
