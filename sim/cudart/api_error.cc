// Error-reporting entry points.
#include <cuda_runtime_api.h>

#include "api_common.h"
#include "call_count.h"

NCCLSIM_EXPORT cudaError_t cudaGetLastError(void) {
  ncclsim::CountCall();
  return ncclsim::TakeLastError();
}
NCCLSIM_EXPORT cudaError_t cudaPeekAtLastError(void) {
  ncclsim::CountCall();
  return ncclsim::PeekLastError();
}
NCCLSIM_EXPORT const char* cudaGetErrorString(cudaError_t error) { return ncclsim::ErrorDescription(error); }
NCCLSIM_EXPORT const char* cudaGetErrorName(cudaError_t error) { return ncclsim::ErrorName(error); }
