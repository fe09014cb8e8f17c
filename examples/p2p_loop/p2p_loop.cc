// A job whose traffic is point-to-point, as pipeline and expert parallelism issue it, for trying
// ncclwatch's P2P rules on real GPUs or on the sim. Every step, by --pattern:
//   pipeline  rank r receives --micro-batches activations from r-1 and sends as many to r+1
//             (each a lone Send/Recv; the host syncs once per step, like a pipeline schedule);
//   ring      rank r receives from r-1 and then sends to r+1, blocking after each (rank 0 sends
//             first, so the ring turns);
//   alltoall  one ncclGroupStart/End with a Send to and a Recv from every other rank, as an
//             expert-parallel all-to-all issues it.
// Flags plant the failures (see --help). Run it under torchrun's environment, e.g.
// `scripts/launch -n 3 -- build/examples/p2p_loop --pattern ring --bug-step 5`.
#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "../common/bootstrap.h"

namespace {

struct Options {
  std::string pattern = "pipeline";
  int steps = 1000;
  int step_ms = 20;
  int micro_batches = 4;
  size_t count = 4096;
  int bug_step = -1;     // the step at which the planted failure happens
  int stall_rank = -1;   // pipeline: stalls in host code before its sends (a slow stage)
  int skip_rank = -1;    // alltoall: leaves --skip-peer out of its group
  int skip_peer = -1;
  int recv_first = 0;    // ring: rank 0 receives first too (a schedule bug: the ring deadlocks)
  int quiet = 0;
};

struct Job {
  Options opt;
  examples::JobEnv env;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

[[noreturn]] void Die(const Job& job, const std::string& what) {
  std::fprintf(stderr, "[rank %d] p2p_loop: %s\n", job.env.rank, what.c_str());
  std::exit(1);
}

void CheckNccl(const Job& job, ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess) Die(job, std::string(what) + ": " + ncclGetErrorString(rc));
}

void CheckCuda(const Job& job, cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) Die(job, std::string(what) + ": " + cudaGetErrorString(rc));
}

void Compute(const Job& job, double fraction) {
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(job.opt.step_ms * fraction * 1000)));
}

// A stage held up in host code (a slow data loader, a Python-side stall) before it sends.
__attribute__((noinline)) void StallBeforeSend() {
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

void Sync(Job& job) { CheckCuda(job, cudaStreamSynchronize(job.stream), "cudaStreamSynchronize"); }

void Send(Job& job, int peer, size_t offset) {
  CheckNccl(job, ncclSend(job.send + offset, job.opt.count, ncclFloat32, peer, job.comm, job.stream), "ncclSend");
}

void Recv(Job& job, int peer, size_t offset) {
  CheckNccl(job, ncclRecv(job.recv + offset, job.opt.count, ncclFloat32, peer, job.comm, job.stream), "ncclRecv");
}

__attribute__((noinline)) void PipelineStep(Job& job, int step) {
  const int r = job.env.rank, n = job.env.world_size;
  const size_t mb = static_cast<size_t>(job.opt.micro_batches);
  if (r > 0) {
    for (size_t m = 0; m < mb; ++m) Recv(job, r - 1, m * job.opt.count);
  }
  Compute(job, 1.0);
  if (r == job.opt.stall_rank && step == job.opt.bug_step) StallBeforeSend();
  if (r + 1 < n) {
    for (size_t m = 0; m < mb; ++m) Send(job, r + 1, m * job.opt.count);
  }
  Sync(job);
}

__attribute__((noinline)) void RingStep(Job& job, int step) {
  const int r = job.env.rank, n = job.env.world_size;
  const bool receive_first = r != 0 || (job.opt.recv_first && step == job.opt.bug_step);
  Compute(job, 1.0);
  if (receive_first) {
    Recv(job, (r + n - 1) % n, 0);
    Sync(job);
  }
  Send(job, (r + 1) % n, 0);
  Sync(job);
  if (!receive_first) {
    Recv(job, (r + n - 1) % n, 0);
    Sync(job);
  }
}

__attribute__((noinline)) void AllToAllStep(Job& job, int step) {
  const int r = job.env.rank, n = job.env.world_size;
  Compute(job, 1.0);
  CheckNccl(job, ncclGroupStart(), "ncclGroupStart");
  for (int peer = 0; peer < n; ++peer) {
    if (peer == r) continue;
    if (r == job.opt.skip_rank && peer == job.opt.skip_peer && step >= job.opt.bug_step) continue;
    Send(job, peer, static_cast<size_t>(peer) * job.opt.count);
    Recv(job, peer, static_cast<size_t>(peer) * job.opt.count);
  }
  CheckNccl(job, ncclGroupEnd(), "ncclGroupEnd");
  Sync(job);
}

void SetUp(Job& job) {
  int ndev = 0;
  CheckCuda(job, cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
  if (ndev < 1) Die(job, "no CUDA device");
  CheckCuda(job, cudaSetDevice(job.env.local_rank % ndev), "cudaSetDevice");
  CheckCuda(job, cudaStreamCreateWithFlags(&job.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const size_t slots = static_cast<size_t>(std::max(job.opt.micro_batches, job.env.world_size));
  CheckCuda(job, cudaMalloc(&job.send, slots * job.opt.count * sizeof(float)), "cudaMalloc(send)");
  CheckCuda(job, cudaMalloc(&job.recv, slots * job.opt.count * sizeof(float)), "cudaMalloc(recv)");
  ncclUniqueId id{};
  std::string error;
  if (!examples::ExchangeUniqueId(job.env, &id, 120, &error)) Die(job, error);
  CheckNccl(job, ncclCommInitRank(&job.comm, job.env.world_size, id, job.env.rank), "ncclCommInitRank");
}

void TearDown(Job& job) {
  Sync(job);
  CheckNccl(job, ncclCommDestroy(job.comm), "ncclCommDestroy");
  cudaFree(job.send);
  cudaFree(job.recv);
  cudaStreamDestroy(job.stream);
}

void AddFlags(CLI::App& app, Options& o) {
  app.add_option("--pattern", o.pattern, "pipeline, ring or alltoall")
      ->check(CLI::IsMember({"pipeline", "ring", "alltoall"}))->capture_default_str();
  app.add_option("--steps", o.steps, "steps")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--step-ms", o.step_ms, "simulated compute per step, ms")->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--micro-batches", o.micro_batches, "pipeline: sends in flight per pair and step")
      ->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--count", o.count, "elements per message")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--bug-step", o.bug_step, "step at which the planted failure happens");
  app.add_option("--stall-rank", o.stall_rank, "pipeline: rank that stalls in host code before its sends");
  app.add_option("--skip-rank", o.skip_rank, "alltoall: rank that leaves --skip-peer out of its groups from --bug-step on");
  app.add_option("--skip-peer", o.skip_peer, "alltoall: the peer it leaves out");
  app.add_flag("--recv-first", o.recv_first, "ring: rank 0 receives before it sends at --bug-step (deadlock)");
  app.add_flag("--quiet", o.quiet, "print nothing on success");
}

}  // namespace

int main(int argc, char** argv) {
  Job job;
  CLI::App app{"Point-to-point job (pipeline, ring or all-to-all) with plantable P2P failures"};
  AddFlags(app, job.opt);
  CLI11_PARSE(app, argc, argv);
  std::string error;
  if (!examples::ReadJobEnv(&job.env, &error)) Die(job, error);
  if (job.env.world_size < 2) Die(job, "needs at least 2 ranks (WORLD_SIZE)");
  SetUp(job);
  for (int step = 0; step < job.opt.steps; ++step) {
    if (job.opt.pattern == "pipeline") PipelineStep(job, step);
    else if (job.opt.pattern == "ring") RingStep(job, step);
    else AllToAllStep(job, step);
    if (job.env.rank == 0 && !job.opt.quiet && step % 100 == 0) {
      std::printf("[rank 0] step %d/%d ok\n", step + 1, job.opt.steps);
      std::fflush(stdout);
    }
  }
  TearDown(job);
  return 0;
}
