// cudaHostRegister / cudaHostUnregister: the range is remembered (allocations.h), so that
// cudaPointerGetAttributes reports it as host memory and the error codes of CUDA come out.
// Nothing is pinned: all of the sim's memory is host memory already.
#include <cuda_runtime_api.h>

#include "allocations.h"
#include "api_common.h"

namespace ncclsim {
namespace {

constexpr unsigned kKnownFlags = cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
                                 cudaHostRegisterReadOnly;

cudaError_t HostRegister(void* ptr, size_t size, unsigned flags) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (ptr == nullptr || size == 0 || (flags & ~kKnownFlags) != 0) return cudaErrorInvalidValue;
  return RegisterHostRange(ptr, size) ? cudaSuccess : cudaErrorHostMemoryAlreadyRegistered;
}

cudaError_t HostUnregister(void* ptr) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (ptr == nullptr) return cudaErrorInvalidValue;
  return UnregisterHostRange(ptr) ? cudaSuccess : cudaErrorHostMemoryNotRegistered;
}

}  // namespace
}  // namespace ncclsim

NCCLSIM_EXPORT cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  return ncclsim::Report(ncclsim::HostRegister(ptr, size, flags));
}
NCCLSIM_EXPORT cudaError_t cudaHostUnregister(void* ptr) { return ncclsim::Report(ncclsim::HostUnregister(ptr)); }
