// A stand-in for a Python extension module: a shared object linked against libnccl.so.2
// and libcudart.so.13 that rtld_local_host loads with dlopen(RTLD_LOCAL), so that NCCL
// is not in the global scope and dlsym(RTLD_NEXT) cannot find it from the preload.
#include <cuda_runtime_api.h>
#include <nccl.h>

extern "C" __attribute__((visibility("default"))) int shim_run_one_rank(void) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return 10;
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) return 11;
  cudaStream_t stream;
  if (cudaStreamCreate(&stream) != cudaSuccess) return 12;
  float* buffer;
  if (cudaMalloc(reinterpret_cast<void**>(&buffer), 64 * sizeof(float)) != cudaSuccess) return 13;
  if (ncclAllReduce(buffer, buffer, 64, ncclFloat, ncclSum, comm, stream) != ncclSuccess) return 14;
  if (ncclBcast(buffer, 7, ncclFloat, 0, comm, stream) != ncclSuccess) return 15;
  if (cudaStreamSynchronize(stream) != cudaSuccess) return 16;
  return 0;
}
