// Per-thread "last error" of the CUDA runtime: every failing call records its error; the
// cudaGetLastError entry point returns and clears it, cudaPeekAtLastError only returns it.
#ifndef NCCLWATCH_SIM_CUDART_ERROR_STATE_H_
#define NCCLWATCH_SIM_CUDART_ERROR_STATE_H_

#include <cuda_runtime_api.h>

namespace ncclsim {

// Records `error` as the calling thread's last error unless it is cudaSuccess; returns it.
cudaError_t Report(cudaError_t error);
cudaError_t TakeLastError();
cudaError_t PeekLastError();
// Sets the calling thread's last error to exactly `error` (cudaSuccess included): the driver
// bridge puts back what its runtime calls changed.
void RestoreLastError(cudaError_t error);

const char* ErrorName(cudaError_t error);
const char* ErrorDescription(cudaError_t error);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_ERROR_STATE_H_
