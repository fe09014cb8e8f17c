// Entry points that nvcc-generated host code calls. Kernels have no CPU body here, so
// registration is accepted and forgotten and a launch is a stream-ordered no-op.
#include <cuda_runtime_api.h>

#include <vector>

#include "api_common.h"

// Declared by crt/host_runtime.h and crt/device_functions.h, which only nvcc includes.
NCCLSIM_EXPORT void** __cudaRegisterFatBinary(void* fat_cubin);
NCCLSIM_EXPORT void __cudaRegisterFatBinaryEnd(void** handle);
NCCLSIM_EXPORT void __cudaUnregisterFatBinary(void** handle);
NCCLSIM_EXPORT void __cudaRegisterFunction(void** handle, const char* host_fun, char* device_fun,
                                           const char* device_name, int thread_limit, uint3* tid, uint3* bid,
                                           dim3* block_dim, dim3* grid_dim, int* warp_size);
NCCLSIM_EXPORT void __cudaRegisterVar(void** handle, char* host_var, char* device_address, const char* device_name,
                                      int ext, size_t size, int constant, int global);
NCCLSIM_EXPORT char __cudaInitModule(void** handle);
NCCLSIM_EXPORT unsigned __cudaPushCallConfiguration(dim3 grid_dim, dim3 block_dim, size_t shared_mem,
                                                    struct CUstream_st* stream);
NCCLSIM_EXPORT cudaError_t __cudaPopCallConfiguration(dim3* grid_dim, dim3* block_dim, size_t* shared_mem,
                                                      void* stream);
NCCLSIM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_fun);
NCCLSIM_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid_dim, dim3 block_dim, void** args,
                                              size_t shared_mem, cudaStream_t stream);
NCCLSIM_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid_dim, dim3 block_dim,
                                                   void** args, size_t shared_mem, cudaStream_t stream);

namespace ncclsim {
namespace {

struct CallConfiguration {
  dim3 grid;
  dim3 block;
  size_t shared_mem;
  cudaStream_t stream;
};
// The <<<...>>> syntax pushes a configuration that the generated stub pops right away.
thread_local std::vector<CallConfiguration> call_configurations;
void* fat_binary_handle = nullptr;

}  // namespace
}  // namespace ncclsim

void** __cudaRegisterFatBinary(void*) { return &ncclsim::fat_binary_handle; }
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, uint3*, uint3*, dim3*, dim3*, int*) {}
void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}
char __cudaInitModule(void**) { return 1; }

unsigned __cudaPushCallConfiguration(dim3 grid_dim, dim3 block_dim, size_t shared_mem, struct CUstream_st* stream) {
  ncclsim::call_configurations.push_back({grid_dim, block_dim, shared_mem, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* grid_dim, dim3* block_dim, size_t* shared_mem, void* stream) {
  auto& stack = ncclsim::call_configurations;
  if (stack.empty()) return ncclsim::Report(cudaErrorInvalidValue);
  const ncclsim::CallConfiguration c = stack.back();
  stack.pop_back();
  *grid_dim = c.grid;
  *block_dim = c.block;
  *shared_mem = c.shared_mem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_fun) {
  if (kernel == nullptr || host_fun == nullptr) return ncclsim::Report(cudaErrorInvalidValue);
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(host_fun));
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3, dim3, void**, size_t, cudaStream_t stream) {
  if (kernel == nullptr) return ncclsim::Report(cudaErrorInvalidValue);
  return ncclsim::Report(ncclsim::LaunchNoOpKernel(stream, ncclsim::DefaultStream::kLegacy));
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3, dim3, void**, size_t, cudaStream_t stream) {
  if (kernel == nullptr) return ncclsim::Report(cudaErrorInvalidValue);
  return ncclsim::Report(ncclsim::LaunchNoOpKernel(stream, ncclsim::DefaultStream::kPerThread));
}
