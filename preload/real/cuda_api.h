// The CUDA runtime functions ncclwatch calls itself, resolved at runtime (never linked:
// the preload must load in processes without libcudart). Resolved at activation.
#ifndef NCCLWATCH_PRELOAD_REAL_CUDA_API_H_
#define NCCLWATCH_PRELOAD_REAL_CUDA_API_H_

#include <cuda_runtime_api.h>

namespace ncclwatch::preload {

struct CudaApi {
  cudaError_t (*GetDevice)(int*) = nullptr;
  cudaError_t (*SetDevice)(int) = nullptr;
  cudaError_t (*GetLastError)() = nullptr;
  cudaError_t (*PeekAtLastError)() = nullptr;
  cudaError_t (*EventCreateWithFlags)(cudaEvent_t*, unsigned int) = nullptr;
  cudaError_t (*EventRecord)(cudaEvent_t, cudaStream_t) = nullptr;
  cudaError_t (*EventQuery)(cudaEvent_t) = nullptr;
  cudaError_t (*StreamIsCapturing)(cudaStream_t, cudaStreamCaptureStatus*) = nullptr;
  cudaError_t (*ThreadExchangeStreamCaptureMode)(cudaStreamCaptureMode*) = nullptr;

  // True when every function above was found.
  bool Resolve();
};

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_REAL_CUDA_API_H_
