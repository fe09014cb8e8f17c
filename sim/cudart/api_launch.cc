// Launch entry points beyond cudaLaunchKernel: cudaLaunchKernelExC and
// cudaLaunchCooperativeKernel. As everywhere in the sim, a kernel does nothing but take its
// place in the stream; the launch configuration is still checked against the device profile.
#include <cuda_runtime_api.h>

#include "api_common.h"
#include "device_profile.h"

namespace ncclsim {
namespace {

cudaError_t CheckConfiguration(dim3 grid, dim3 block) {
  const DeviceProfile& p = ActiveProfile();
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (threads == 0 || grid.x == 0 || grid.y == 0 || grid.z == 0) return cudaErrorInvalidConfiguration;
  if (threads > static_cast<unsigned long long>(p.threads_per_block) || block.z > 64 || grid.y > 65535 ||
      grid.z > 65535) {
    return cudaErrorInvalidConfiguration;
  }
  return cudaSuccess;
}

cudaError_t LaunchEx(const cudaLaunchConfig_t* config, const void* func) {
  if (config == nullptr) return cudaErrorInvalidValue;
  if (func == nullptr) return cudaErrorInvalidDeviceFunction;
  if (cudaError_t e = CheckConfiguration(config->gridDim, config->blockDim); e != cudaSuccess) return e;
  if (config->numAttrs != 0 && config->attrs == nullptr) return cudaErrorInvalidValue;
  return LaunchNoOpKernel(config->stream, DefaultStream::kLegacy);
}

// Every block of a cooperative grid must be resident at once.
cudaError_t LaunchCooperative(const void* func, dim3 grid, dim3 block, cudaStream_t stream) {
  if (func == nullptr) return cudaErrorInvalidDeviceFunction;
  if (cudaError_t e = CheckConfiguration(grid, block); e != cudaSuccess) return e;
  const DeviceProfile& p = ActiveProfile();
  const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z;
  if (blocks > 1ull * p.multiprocessors * p.blocks_per_multiprocessor) return cudaErrorCooperativeLaunchTooLarge;
  return LaunchNoOpKernel(stream, DefaultStream::kLegacy);
}

}  // namespace
}  // namespace ncclsim

NCCLSIM_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void**) {
  return ncclsim::Report(ncclsim::LaunchEx(config, func));
}
NCCLSIM_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void**, size_t,
                                                       cudaStream_t stream) {
  return ncclsim::Report(ncclsim::LaunchCooperative(func, grid, block, stream));
}
