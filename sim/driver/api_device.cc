// Initialisation, version and device queries. Devices, their attributes and memory sizes are the
// sim runtime's (sim/cudart device profile), read through the bridge.
#include <cstdio>
#include <cstring>
#include <strings.h>

#include "driver_api.h"
#include "runtime_link.h"

namespace ncclsim::driver {

CUresult CheckDevice(CUdevice device) {
  const int count = rt::DeviceCount();
  if (count == 0) return CUDA_ERROR_NO_DEVICE;
  return device >= 0 && device < count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

namespace {

CUresult Uuid(CUuuid* uuid, CUdevice device) {
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  // Same bytes as the runtime's cudaDeviceProp::uuid, so both APIs name a device alike.
  std::memset(uuid, 0, sizeof(*uuid));
  uuid->bytes[0] = static_cast<char>(device + 1);
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace ncclsim::driver

using ncclsim::driver::CheckDevice;
namespace rt = ncclsim::driver::rt;

// The sim runtime never calls cuInit (in real CUDA the runtime does), so the other calls do not
// insist on it: a program that reaches the driver through the runtime works as with real CUDA.
NCCLSIM_DRIVER_EXPORT CUresult cuInit(unsigned int flags) {
  return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
NCCLSIM_DRIVER_EXPORT CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = ncclsim::driver::kDriverVersion;
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuDeviceGetCount(int* count) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = rt::DeviceCount();  // 0 devices is success with a count of 0, as in the real driver
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  ncclsim::driver::rt::CountCall();
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = CheckDevice(ordinal); r != CUDA_SUCCESS) return r;
  *device = ordinal;
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  std::snprintf(name, static_cast<size_t>(length), "ncclsim CPU device %d", device);
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  return rt::DeviceAttribute(value, attribute, device);
}
NCCLSIM_DRIVER_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  size_t free_bytes = 0;
  return rt::MemGetInfo(&free_bytes, bytes);
}
NCCLSIM_DRIVER_EXPORT CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice device) {
  if (major == nullptr || minor == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device); r) return r;
  return cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
}
NCCLSIM_DRIVER_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device) {
  return ncclsim::driver::Uuid(uuid, device);
}
NCCLSIM_DRIVER_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) {
  return ncclsim::driver::Uuid(uuid, device);
}
NCCLSIM_DRIVER_EXPORT CUresult cuDeviceGetPCIBusId(char* bus_id, int length, CUdevice device) {
  if (bus_id == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  int domain = 0, bus = 0, slot = 0;
  if (CUresult r = cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, device); r) return r;
  if (CUresult r = cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, device); r) return r;
  if (CUresult r = cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, device); r) return r;
  // The real driver's format, e.g. "0000:1b:00.0" (13 characters with the terminator).
  std::snprintf(bus_id, static_cast<size_t>(length), "%04x:%02x:%02x.0", domain, bus, slot);
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice* device, const char* bus_id) {
  if (device == nullptr || bus_id == nullptr) return CUDA_ERROR_INVALID_VALUE;
  char name[16];
  for (int d = 0; d < rt::DeviceCount(); ++d) {
    if (cuDeviceGetPCIBusId(name, sizeof(name), d) == CUDA_SUCCESS && strcasecmp(name, bus_id) == 0) {
      *device = d;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_DEVICE;
}
