/* Built and linked against the REAL libnccl.so.2 and libcudart.so.13 (no RPATH to the
 * sim). Run with LD_LIBRARY_PATH pointing at the sim, it must work unchanged: 2 ranks
 * via fork, one allreduce checked. Exit 0 on success. */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COUNT 4096

static int RunRank(ncclUniqueId id, int rank) {
  float host[COUNT];
  float *send = NULL, *recv = NULL;
  ncclComm_t comm;
  cudaStream_t stream;
  if (cudaSetDevice(rank) != cudaSuccess) return 10;
  if (cudaMalloc((void**)&send, sizeof host) != cudaSuccess) return 11;
  if (cudaMalloc((void**)&recv, sizeof host) != cudaSuccess) return 12;
  for (int i = 0; i < COUNT; ++i) host[i] = (float)(rank + 1) * (float)(i % 10);
  if (cudaMemcpy(send, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess) return 13;
  if (cudaStreamCreate(&stream) != cudaSuccess) return 14;
  if (ncclCommInitRank(&comm, 2, id, rank) != ncclSuccess) return 15;
  if (ncclAllReduce(send, recv, COUNT, ncclFloat, ncclSum, comm, stream) != ncclSuccess) return 16;
  if (cudaStreamSynchronize(stream) != cudaSuccess) return 17;
  if (cudaMemcpy(host, recv, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) return 18;
  for (int i = 0; i < COUNT; ++i)
    if (host[i] != 3.0f * (float)(i % 10)) return 19;
  if (ncclCommDestroy(comm) != ncclSuccess) return 20;
  cudaFree(send);
  cudaFree(recv);
  return 0;
}

int main(void) {
  ncclUniqueId id;
  pid_t pids[2];
  int failed = 0, left = 2;
  if (ncclGetUniqueId(&id) != ncclSuccess) return 2;
  for (int r = 0; r < 2; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) _exit(RunRank(id, r));
  }
  for (int waited_ms = 0; left > 0; waited_ms += 10) {
    for (int r = 0; r < 2; ++r) {
      int status;
      if (pids[r] > 0 && waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          fprintf(stderr, "rank %d failed (status 0x%x)\n", r, status);
          failed = 1;
        }
        pids[r] = 0;
        --left;
      }
    }
    if (left > 0 && waited_ms > 30000) {
      fprintf(stderr, "timeout\n");
      for (int r = 0; r < 2; ++r)
        if (pids[r] > 0) { kill(pids[r], SIGKILL); waitpid(pids[r], NULL, 0); }
      return 3;
    }
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  if (!failed) printf("fidelity: allreduce over the sim through the real ABI OK\n");
  return failed;
}
