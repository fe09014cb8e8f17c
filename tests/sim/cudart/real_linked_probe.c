/* Linked against the real libcudart.so.13; run against the sim through LD_LIBRARY_PATH.
 *   real_linked_probe sim N  -> exit 0 iff the sim answered (N devices, stream work done)
 *   real_linked_probe real N -> exit 0 iff the real library answered differently from a sim
 *                               with N devices; 77 (skipped) if a real device is present. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void MarkDone(void* flag) { *(volatile int*)flag = 1; }

static int ProbeSim(int expected_devices) {
  int count = -1;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count != expected_devices) {
    fprintf(stderr, "cudaGetDeviceCount: rc=%d count=%d, want 0 and %d\n", (int)rc, count, expected_devices);
    return 1;
  }
  struct cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || strncmp(prop.name, "ncclsim", 7) != 0) {
    fprintf(stderr, "device 0 is not a sim device\n");
    return 1;
  }
  cudaStream_t stream;
  volatile int done = 0;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
      cudaLaunchHostFunc(stream, MarkDone, (void*)&done) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess || done != 1 || cudaStreamDestroy(stream) != cudaSuccess) {
    fprintf(stderr, "stream work did not complete\n");
    return 1;
  }
  return 0;
}

static int ProbeReal(int sim_devices) {
  int count = -1;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc == cudaSuccess && count > 0) {
    fprintf(stderr, "a real device is present; nothing to compare\n");
    return 77;
  }
  if (rc == cudaSuccess && count == sim_devices) return 1;
  fprintf(stderr, "real library: cudaGetDeviceCount rc=%d (%s)\n", (int)rc, cudaGetErrorName(rc));
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int devices = atoi(argv[2]);
  if (strcmp(argv[1], "sim") == 0) return ProbeSim(devices);
  if (strcmp(argv[1], "real") == 0) return ProbeReal(devices);
  return 2;
}
