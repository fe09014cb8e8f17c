// Calls NCCL and CUDA runtime entry points the preload hooks and prints every return code
// and result, one per line, and for the NCCL calls that never block also the errno they leave
// (set to a sentinel before each); then the driver's (fidelity_driver.cc). Run with and
// without LD_PRELOAD (over the sim and over the real libraries) by fidelity_check.sh, which
// requires identical output.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cerrno>
#include <cstdio>

void RunDriverChecks();  // fidelity_driver.cc

namespace {

void Print(const char* what, int rc) { std::printf("%s rc=%d\n", what, rc); }

// errno as the call left it: a hook must leave it as the library set it (the first calls
// activate ncclwatch, which opens files and shared memory; a group's end records events).
constexpr int kErrnoSentinel = 4242;
void PrintWithErrno(const char* what, int rc) {
  const int left = errno;
  std::printf("%s rc=%d errno=%d\n", what, rc, left);
}
#define CALL_KEEPING_ERRNO(what, expr) PrintWithErrno(what, (errno = kErrnoSentinel, static_cast<int>(expr)))

// Only reached when the library can really run a collective (the sim).
void RunCollectives(ncclComm_t comm) {
  cudaStream_t stream = nullptr;
  Print("cudaStreamCreate", cudaStreamCreate(&stream));
  float* buffer = nullptr;
  Print("cudaMalloc", cudaMalloc(reinterpret_cast<void**>(&buffer), 8 * sizeof(float)));
  float host[8];
  for (int i = 0; i < 8; ++i) host[i] = 1.5f * (i + 1);
  Print("cudaMemcpy to device", cudaMemcpy(buffer, host, sizeof(host), cudaMemcpyHostToDevice));
  CALL_KEEPING_ERRNO("ncclAllReduce", ncclAllReduce(buffer, buffer, 8, ncclFloat, ncclSum, comm, stream));
  CALL_KEEPING_ERRNO("ncclBcast", ncclBcast(buffer, 8, ncclFloat, 0, comm, stream));
  CALL_KEEPING_ERRNO("ncclGroupStart", ncclGroupStart());
  CALL_KEEPING_ERRNO("ncclReduce in group", ncclReduce(buffer, buffer, 8, ncclFloat, ncclMax, 0, comm, stream));
  CALL_KEEPING_ERRNO("ncclGroupEnd", ncclGroupEnd());
  CALL_KEEPING_ERRNO("ncclAllReduce bad root type",
                     ncclAllReduce(buffer, buffer, 8, ncclNumTypes, ncclSum, comm, stream));
  // A group with an op NCCL refuses, launched, and one simulated: the same codes either way.
  CALL_KEEPING_ERRNO("ncclGroupStart", ncclGroupStart());
  CALL_KEEPING_ERRNO("ncclAllReduce bad type in group",
                     ncclAllReduce(buffer, buffer, 8, ncclNumTypes, ncclSum, comm, stream));
  CALL_KEEPING_ERRNO("ncclAllReduce in group", ncclAllReduce(buffer, buffer, 8, ncclFloat, ncclSum, comm, stream));
  CALL_KEEPING_ERRNO("ncclGroupEnd", ncclGroupEnd());
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  CALL_KEEPING_ERRNO("ncclGroupStart", ncclGroupStart());
  CALL_KEEPING_ERRNO("ncclAllReduce bad type in simulated group",
                     ncclAllReduce(buffer, buffer, 8, ncclNumTypes, ncclSum, comm, stream));
  CALL_KEEPING_ERRNO("ncclBcast in simulated group", ncclBcast(buffer, 8, ncclFloat, 0, comm, stream));
  CALL_KEEPING_ERRNO("ncclGroupSimulateEnd", ncclGroupSimulateEnd(&sim));
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
    RunDriverChecks();  // with a communicator: the preload is active and publishes the syncs
    Print("ncclCommDestroy", ncclCommDestroy(comm));
  } else {
    RunDriverChecks();
  }
  Print("ncclAllReduce null comm", ncclAllReduce(nullptr, nullptr, 1, ncclFloat, ncclSum, nullptr, nullptr));
  Print("cudaStreamSynchronize(0)", cudaStreamSynchronize(nullptr));
  Print("cudaGetLastError", cudaGetLastError());
  Print("cudaDeviceSynchronize", cudaDeviceSynchronize());
  Print("cudaGetLastError", cudaGetLastError());
  Print("ncclCommDestroy(NULL)", ncclCommDestroy(nullptr));
  Print("ncclCommAbort(NULL)", ncclCommAbort(nullptr));
  CALL_KEEPING_ERRNO("ncclGroupStart", ncclGroupStart());
  CALL_KEEPING_ERRNO("ncclGroupEnd", ncclGroupEnd());
  return init == ncclSuccess ? 0 : 3;
}
