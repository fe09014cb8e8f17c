// What the simulated devices look like: one profile (a real GPU model) shared by every device.
//
// NCCLSIM_DEVICE_PROFILE selects it ("h100", the default, or "a100"); an unknown value is
// reported on one stderr line and the default is used. Every cudaDeviceAttr enumerator of
// driver_types.h has a value, taken from one table filled from the profile, and
// cudaGetDeviceProperties is filled from the same table, so the two always agree. Jobs divide by
// these numbers (FSDP2 died with SIGFPE on a zero maxThreadsPerMultiProcessor), so every
// attribute a real GPU reports as positive is positive here.
#ifndef NCCLWATCH_SIM_CUDART_DEVICE_PROFILE_H_
#define NCCLWATCH_SIM_CUDART_DEVICE_PROFILE_H_

#include <cuda_runtime_api.h>

#include <cstddef>

namespace ncclsim {

struct DeviceProfile {
  const char* key;    // value of NCCLSIM_DEVICE_PROFILE
  const char* model;  // the GPU it copies, for messages
  int compute_major;
  int compute_minor;
  int multiprocessors;
  size_t memory_bytes;
  int clock_khz;
  int memory_clock_khz;
  int memory_bus_bits;
  int l2_cache_bytes;
  int persisting_l2_max_bytes;
  int shared_per_block;
  int shared_per_block_optin;
  int shared_per_multiprocessor;
  int reserved_shared_per_block;
  int registers_per_block;
  int registers_per_multiprocessor;
  int threads_per_block;
  int threads_per_multiprocessor;
  int blocks_per_multiprocessor;
  int warp_size;
  int async_engines;
  int cluster_launch;        // 1 from compute capability 9.0
  int mem_sync_domains;      // 4 on Hopper, 1 before
  unsigned pci_device_id;    // (device id << 16) | vendor id, as cudaDevAttrGpuPciDeviceId
  unsigned pci_subsystem_id;
};

// The profile chosen by NCCLSIM_DEVICE_PROFILE, read once.
const DeviceProfile& ActiveProfile();

// The value of `attribute` for `device` under the active profile. cudaErrorInvalidDevice for a
// device outside 0..count-1, cudaErrorInvalidValue for a null `value` or a number that is not a
// cudaDeviceAttr enumerator. Does not record a last error.
cudaError_t DeviceAttributeValue(cudaDeviceAttr attribute, int device, int* value);

// Fills every field of `prop` for `device` (assumed valid) from the same values.
void FillDeviceProperties(int device, cudaDeviceProp* prop);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_DEVICE_PROFILE_H_
