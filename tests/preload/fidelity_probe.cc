// Calls NCCL and CUDA runtime entry points the preload hooks and prints every return code
// and result, one per line. Run with and without LD_PRELOAD (over the sim and over the
// real libraries) by fidelity_check.sh, which requires identical output.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdio>

namespace {

void Print(const char* what, int rc) { std::printf("%s rc=%d\n", what, rc); }

// Only reached when the library can really run a collective (the sim).
void RunCollectives(ncclComm_t comm) {
  cudaStream_t stream = nullptr;
  Print("cudaStreamCreate", cudaStreamCreate(&stream));
  float* buffer = nullptr;
  Print("cudaMalloc", cudaMalloc(reinterpret_cast<void**>(&buffer), 8 * sizeof(float)));
  float host[8];
  for (int i = 0; i < 8; ++i) host[i] = 1.5f * (i + 1);
  Print("cudaMemcpy to device", cudaMemcpy(buffer, host, sizeof(host), cudaMemcpyHostToDevice));
  Print("ncclAllReduce", ncclAllReduce(buffer, buffer, 8, ncclFloat, ncclSum, comm, stream));
  Print("ncclBcast", ncclBcast(buffer, 8, ncclFloat, 0, comm, stream));
  Print("ncclGroupStart", ncclGroupStart());
  Print("ncclReduce in group", ncclReduce(buffer, buffer, 8, ncclFloat, ncclMax, 0, comm, stream));
  Print("ncclGroupEnd", ncclGroupEnd());
  Print("ncclAllReduce bad root type", ncclAllReduce(buffer, buffer, 8, ncclNumTypes, ncclSum, comm, stream));
  Print("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  Print("cudaMemcpy to host", cudaMemcpy(host, buffer, sizeof(host), cudaMemcpyDeviceToHost));
  for (float v : host) std::printf("value %g\n", v);
  ncclResult_t async = ncclInternalError;
  Print("ncclCommGetAsyncError", ncclCommGetAsyncError(comm, &async));
  std::printf("async state=%d\n", static_cast<int>(async));
  cudaEvent_t event = nullptr;
  Print("cudaEventCreate", cudaEventCreate(&event));
  Print("cudaEventRecord", cudaEventRecord(event, stream));
  Print("cudaEventSynchronize", cudaEventSynchronize(event));
  Print("cudaStreamDestroy", cudaStreamDestroy(stream));
  Print("cudaFree", cudaFree(buffer));
}

}  // namespace

int main() {
  int version = -1;
  Print("ncclGetVersion", ncclGetVersion(&version));
  std::printf("nccl version=%d\n", version);
  int runtime = -1;
  Print("cudaRuntimeGetVersion", cudaRuntimeGetVersion(&runtime));
  std::printf("cudart version=%d\n", runtime);
  ncclUniqueId id;
  Print("ncclGetUniqueId", ncclGetUniqueId(&id));
  ncclComm_t comm = nullptr;
  const ncclResult_t init = ncclCommInitRank(&comm, 1, id, 0);
  Print("ncclCommInitRank", init);
  if (init == ncclSuccess && comm != nullptr) {
    RunCollectives(comm);
    Print("ncclCommDestroy", ncclCommDestroy(comm));
  }
  Print("ncclAllReduce null comm", ncclAllReduce(nullptr, nullptr, 1, ncclFloat, ncclSum, nullptr, nullptr));
  Print("cudaStreamSynchronize(0)", cudaStreamSynchronize(nullptr));
  Print("cudaGetLastError", cudaGetLastError());
  Print("cudaDeviceSynchronize", cudaDeviceSynchronize());
  Print("cudaGetLastError", cudaGetLastError());
  Print("ncclCommDestroy(NULL)", ncclCommDestroy(nullptr));
  Print("ncclCommAbort(NULL)", ncclCommAbort(nullptr));
  Print("ncclGroupStart", ncclGroupStart());
  Print("ncclGroupEnd", ncclGroupEnd());
  return init == ncclSuccess ? 0 : 3;
}
