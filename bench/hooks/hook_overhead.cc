// Per-call host time of each hooked family, over the sim in no-op mode (NCCLSIM_NOOP=1), so
// that with LD_PRELOAD=libncclwatch.so the difference is the hook alone. One run prints one
// line per timed batch:
//
//   sample <family> <ns per call>
//
// families: collective (ncclAllReduce), group (ncclGroupStart + ncclAllReduce + ncclGroupEnd,
// per group), p2p (ncclSend), sync (cudaStreamSynchronize), and the floor: plt_empty (an
// empty call into a shared object) and clock_read (one clock_gettime(CLOCK_MONOTONIC)).
// Families run in turn, batch by batch, so slow phases of a shared machine hit them alike.
// scripts/bench runs it alternately with and without the preload and pairs the batches.
//
// usage: bench_hook_overhead [BATCHES]   (default 40)
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/hooks/empty_call.h"

namespace {

// Fewer calls per batch than the preload's event pool holds (512), with an untimed pause
// between batches in which its tracker drains completed events: the steady state of a
// training step rather than an endless burst.
constexpr int kCallsPerBatch = 256;
constexpr auto kPauseBetweenBatches = std::chrono::milliseconds(3);

struct Family {
  std::string name;
  std::function<void()> call;
};

double NsPerCall(const std::function<void()>& call) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCallsPerBatch; ++i) call();
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(stop - start).count() / kCallsPerBatch;
}

struct Sim {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* buffer = nullptr;
};

bool SetUp(Sim* sim) {
  ncclUniqueId id;
  return ncclGetUniqueId(&id) == ncclSuccess && ncclCommInitRank(&sim->comm, 1, id, 0) == ncclSuccess &&
         cudaStreamCreate(&sim->stream) == cudaSuccess &&
         cudaMalloc(reinterpret_cast<void**>(&sim->buffer), 1024) == cudaSuccess;
}

std::vector<Family> Families(const Sim& sim) {
  return {
      {"collective", [&] { ncclAllReduce(sim.buffer, sim.buffer, 256, ncclFloat, ncclSum, sim.comm, sim.stream); }},
      {"group",
       [&] {
         ncclGroupStart();
         ncclAllReduce(sim.buffer, sim.buffer, 256, ncclFloat, ncclSum, sim.comm, sim.stream);
         ncclGroupEnd();
       }},
      {"p2p", [&] { ncclSend(sim.buffer, 256, ncclFloat, 0, sim.comm, sim.stream); }},
      {"sync", [&] { cudaStreamSynchronize(sim.stream); }},
      {"plt_empty", [] { ncclwatch_bench_empty_call(); }},
      {"clock_read",
       [] {
         timespec ts;
         clock_gettime(CLOCK_MONOTONIC, &ts);
         asm volatile("" : : "r"(&ts) : "memory");
       }},
  };
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 40;
  if (std::getenv("NCCLSIM_NOOP") == nullptr) {
    std::fprintf(stderr, "bench_hook_overhead: set NCCLSIM_NOOP=1 (the sim must not run the ops)\n");
    return 2;
  }
  Sim sim;
  if (batches < 1 || !SetUp(&sim)) {
    std::fprintf(stderr, "bench_hook_overhead: setup failed\n");
    return 1;
  }
  const std::vector<Family> families = Families(sim);
  for (const Family& f : families) NsPerCall(f.call);  // warm up: resolve symbols, fault pages
  for (int b = 0; b < batches; ++b) {
    for (const Family& f : families) {
      std::printf("sample %s %.2f\n", f.name.c_str(), NsPerCall(f.call));
      std::this_thread::sleep_for(kPauseBetweenBatches);
    }
  }
  ncclCommDestroy(sim.comm);
  return 0;
}
