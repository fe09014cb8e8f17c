// Send/Recv between ranks of a torchrun-style job, to test P2P across simulated hosts.
//
// Usage: cluster_p2p_exchange ring|local STEPS   (reads RANK, LOCAL_RANK, WORLD_SIZE, MASTER_*)
//   ring:  each step, rank r sends to r+1 and receives from r-1 (mod n) in one group; with two
//          ranks per host every host's ranks talk to the next host.
//   local: each step, rank r exchanges with r^1, its neighbour on the same host (2 ranks a host).
// Each rank sends COUNT floats of value (sender+1)*1000+step and checks what it received.
// Prints "rank R p2p <mode> done: S steps"; exit 1 with one line on any failure. Steps are waited
// for as torch's watchdog does: on an async error (e.g. ncclRemoteError) it prints
// "rank R async error: TEXT", aborts the comm and exits 4.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <string>
#include <vector>

#include "../../examples/common/bootstrap.h"

namespace {

constexpr size_t kCount = 50000;  // 200 KB: several 32 KiB staging chunks per message

[[noreturn]] void Die(int rank, const std::string& what) {
  std::fprintf(stderr, "[rank %d] p2p_exchange: %s\n", rank, what.c_str());
  std::exit(1);
}

void Check(int rank, cudaError_t e, const char* what) {
  if (e != cudaSuccess) Die(rank, std::string(what) + ": " + cudaGetErrorString(e));
}

void Check(int rank, ncclResult_t r, const char* what) {
  if (r != ncclSuccess) Die(rank, std::string(what) + ": " + ncclGetErrorString(r));
}

// Waits for the step as PyTorch's ProcessGroupNCCL watchdog does: polls the stream and the
// comm's async error; on an error, aborts the comm (which releases the stream) and exits 4.
void WaitOrAbort(int rank, ncclComm_t comm, cudaStream_t stream) {
  for (;;) {
    const cudaError_t q = cudaStreamQuery(stream);
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) Check(rank, q, "cudaStreamQuery");
    ncclResult_t async = ncclSuccess;
    Check(rank, ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess) {
      std::printf("rank %d async error: %s\n", rank, ncclGetErrorString(async));
      std::fflush(stdout);
      ncclCommAbort(comm);
      Check(rank, cudaStreamSynchronize(stream), "cudaStreamSynchronize after abort");
      std::exit(4);
    }
    usleep(10000);  // 10 ms, as often as torch's watchdog polls by default (every 100 ms) and more
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "ring") != 0 && std::strcmp(argv[1], "local") != 0)) {
    std::fprintf(stderr, "usage: cluster_p2p_exchange ring|local STEPS\n");
    return 2;
  }
  const bool ring = std::strcmp(argv[1], "ring") == 0;
  const int steps = std::atoi(argv[2]);
  examples::JobEnv env;
  std::string error;
  if (!examples::ReadJobEnv(&env, &error)) Die(-1, error);
  const int n = env.world_size, me = env.rank;
  if (!ring && n % 2 != 0) Die(me, "local mode needs an even number of ranks");
  const int to = ring ? (me + 1) % n : me ^ 1;
  const int from = ring ? (me - 1 + n) % n : me ^ 1;

  int ndev = 0;
  Check(me, cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
  Check(me, cudaSetDevice(env.local_rank % ndev), "cudaSetDevice");
  cudaStream_t stream;
  Check(me, cudaStreamCreate(&stream), "cudaStreamCreate");
  float *send = nullptr, *recv = nullptr;
  Check(me, cudaMalloc(&send, kCount * sizeof(float)), "cudaMalloc");
  Check(me, cudaMalloc(&recv, kCount * sizeof(float)), "cudaMalloc");
  ncclUniqueId id{};
  if (!examples::ExchangeUniqueId(env, &id, 120, &error)) Die(me, error);
  ncclComm_t comm = nullptr;
  Check(me, ncclCommInitRank(&comm, n, id, me), "ncclCommInitRank");

  std::vector<float> host(kCount);
  for (int step = 0; step < steps; ++step) {
    std::fill(host.begin(), host.end(), static_cast<float>((me + 1) * 1000 + step));
    Check(me, cudaMemcpy(send, host.data(), kCount * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    Check(me, ncclGroupStart(), "ncclGroupStart");
    Check(me, ncclSend(send, kCount, ncclFloat, to, comm, stream), "ncclSend");
    Check(me, ncclRecv(recv, kCount, ncclFloat, from, comm, stream), "ncclRecv");
    Check(me, ncclGroupEnd(), "ncclGroupEnd");
    WaitOrAbort(me, comm, stream);
    Check(me, cudaMemcpy(host.data(), recv, kCount * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    const float want = static_cast<float>((from + 1) * 1000 + step);
    for (size_t i = 0; i < kCount; ++i) {
      if (host[i] != want) {
        Die(me, "step " + std::to_string(step) + ": element " + std::to_string(i) + " from rank " +
                    std::to_string(from) + " is " + std::to_string(host[i]) + ", expected " + std::to_string(want));
      }
    }
  }
  Check(me, ncclCommDestroy(comm), "ncclCommDestroy");
  std::printf("rank %d p2p %s done: %d steps\n", me, argv[1], steps);
  return 0;
}
