// A C++ job shaped like PyTorch DDP training, for trying ncclwatch on real GPUs or on the sim.
//
// Each step: load a batch, broadcast module buffers every --bcast-every steps (DDP's
// broadcast_buffers), forward with a tensor-parallel AllReduce on a split communicator, backward
// with the gradient AllReduce on the world communicator, then read the loss back to the host
// (cudaMemcpyAsync + cudaStreamSynchronize, like `loss.item()`). Compute is a jittered sleep.
//
// Flags plant the field failures ncclwatch must diagnose (see --help). Run it under torchrun's
// environment, e.g. `scripts/launch -n 4 -- build/examples/ddp_loop`.
#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../common/bootstrap.h"

namespace {

struct Options {
  int steps = 40;
  int step_ms = 20;
  double jitter = 0.3;
  int bcast_every = 10;
  int tp = 2;
  size_t count = 1 << 16;
  int straggler_rank = -1;
  int straggler_step = -1;
  double straggler_sec = 30;
  int extra_bcast_rank = -1;
  int extra_bcast_step = -1;
  int mismatch_rank = -1;
  int mismatch_step = -1;
  std::string mismatch_kind = "count";
  std::string transport_hang;
  std::string comm_name;  // empty: plain ncclCommInitRank
  int blocked_thread = 0;
  int idle_threads = 0;
  int stuck_sync_rank = -1;
  int stuck_sync_step = -1;
  int exit_rank = -1;
  int exit_step = -1;
  int abort_rank = -1;
  int abort_step = -1;
  int own_sigterm = 0;
  int extra_comms = 0;
  int extra_comms_step = -1;
  int quiet = 0;
};

struct Job {
  Options opt;
  examples::JobEnv env;
  ncclComm_t world = nullptr;
  ncclComm_t tp = nullptr;
  cudaStream_t stream = nullptr;
  float* grads = nullptr;
  float* activations = nullptr;
  float* buffers = nullptr;
  float* loss_host = nullptr;
  std::vector<float> grads_init;
  std::mt19937 rng;
};

[[noreturn]] void Die(const Job& job, const std::string& what) {
  std::fprintf(stderr, "[rank %d] ddp_loop: %s\n", job.env.rank, what.c_str());
  std::exit(1);
}

void CheckNccl(const Job& job, ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess) Die(job, std::string(what) + ": " + ncclGetErrorString(rc));
}

void CheckCuda(const Job& job, cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) Die(job, std::string(what) + ": " + cudaGetErrorString(rc));
}

// Compute is simulated as a sleep around step_ms with +-jitter.
__attribute__((noinline)) void SimulateCompute(Job& job, double fraction) {
  std::uniform_real_distribution<double> u(1.0 - job.opt.jitter, 1.0 + job.opt.jitter);
  auto ms = job.opt.step_ms * fraction * u(job.rng);
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(ms * 1000)));
}

// The straggler of field report 2: after a resume, this rank replays the data loader up to the
// checkpointed position, far slower than its peers.
__attribute__((noinline)) void SkipSamplesToResumePosition(double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

__attribute__((noinline)) void RestoreDataLoaderState(Job& job) {
  SkipSamplesToResumePosition(job.opt.straggler_sec);
  // Keeps this frame on the stack (no tail call), as real code doing more work after would.
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void LoadBatch(Job& job, int step) {
  if (job.env.rank == job.opt.straggler_rank && step == job.opt.straggler_step) {
    RestoreDataLoaderState(job);
  }
  SimulateCompute(job, 0.1);
}

__attribute__((noinline)) void BroadcastBuffers(Job& job) {
  CheckNccl(job, ncclBroadcast(job.buffers, job.buffers, 256, ncclFloat32, 0, job.world, job.stream),
            "ncclBroadcast(buffers)");
}

__attribute__((noinline)) void Forward(Job& job, int step) {
  if (step % job.opt.bcast_every == 0) BroadcastBuffers(job);
  // Field report 5: one rank runs an extra forward (e.g. validation) and so an extra broadcast.
  if (job.env.rank == job.opt.extra_bcast_rank && step == job.opt.extra_bcast_step) BroadcastBuffers(job);
  SimulateCompute(job, 0.4);
  if (job.tp != nullptr) {
    CheckNccl(job, ncclAllReduce(job.activations, job.activations, 4096, ncclFloat32, ncclSum, job.tp, job.stream),
              "ncclAllReduce(tp activations)");
  }
}

// A crash in the middle of a step (a failed assertion, an out-of-memory abort): SIGABRT.
__attribute__((noinline)) void CrashInBackward() { std::abort(); }

__attribute__((noinline)) void Backward(Job& job, int step) {
  SimulateCompute(job, 0.5);
  if (job.env.rank == job.opt.abort_rank && step == job.opt.abort_step) CrashInBackward();
  CheckCuda(job, cudaMemcpyAsync(job.grads, job.grads_init.data(), job.opt.count * sizeof(float),
                                 cudaMemcpyHostToDevice, job.stream), "cudaMemcpyAsync(grads)");
  size_t count = job.opt.count;
  ncclDataType_t dtype = ncclFloat32;
  if (job.env.rank == job.opt.mismatch_rank && step == job.opt.mismatch_step) {
    if (job.opt.mismatch_kind == "count") count -= 1;
    else dtype = ncclInt32;
  }
  CheckNccl(job, ncclAllReduce(job.grads, job.grads, count, dtype, ncclSum, job.world, job.stream),
            "ncclAllReduce(gradients)");
}

// Stands in for a GPU kernel that never finishes (not NCCL's): the stream stops here for good.
void CUDART_CB NeverFinishingKernel(void*) {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// Like `loss.item()`: a device-to-host copy, then the host blocks until the stream gets there.
__attribute__((noinline)) float ReadLoss(Job& job, int step) {
  if (job.env.rank == job.opt.stuck_sync_rank && step == job.opt.stuck_sync_step) {
    CheckCuda(job, cudaLaunchHostFunc(job.stream, NeverFinishingKernel, nullptr), "cudaLaunchHostFunc");
  }
  CheckCuda(job, cudaMemcpyAsync(job.loss_host, job.grads, sizeof(float), cudaMemcpyDeviceToHost, job.stream),
            "cudaMemcpyAsync(loss)");
  CheckCuda(job, cudaStreamSynchronize(job.stream), "cudaStreamSynchronize");
  return *job.loss_host;
}

void CheckAsyncErrors(Job& job) {
  for (ncclComm_t comm : {job.world, job.tp}) {
    if (comm == nullptr) continue;
    ncclResult_t async = ncclSuccess;
    CheckNccl(job, ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress) {
      Die(job, std::string("asynchronous NCCL error: ") + ncclGetErrorString(async));
    }
  }
}

// The collective number (1-based, on the world communicator) of step's gradient AllReduce.
int GradientAllReduceSeq(const Options& opt, int step) {
  int seq = 0;
  for (int s = 0; s <= step; ++s) seq += (s % opt.bcast_every == 0 ? 1 : 0) + 1;
  return seq;
}

// Sim only: turns --transport-hang into the sim's NCCLSIM_FAULT. Real NCCL ignores the variable.
void PlantTransportHang(const Options& opt) {
  if (opt.transport_hang.empty() || std::getenv("NCCLSIM_FAULT") != nullptr) return;
  std::string fault = "hang:comm=0,seq=";
  fault += opt.transport_hang == "init" ? std::string("init")
                                        : std::to_string(GradientAllReduceSeq(opt, std::stoi(opt.transport_hang)));
  setenv("NCCLSIM_FAULT", fault.c_str(), 1);
}

void SetUp(Job& job) {
  int ndev = 0;
  CheckCuda(job, cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
  if (ndev < 1) Die(job, "no CUDA device");
  CheckCuda(job, cudaSetDevice(job.env.local_rank % ndev), "cudaSetDevice");
  CheckCuda(job, cudaStreamCreateWithFlags(&job.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  CheckCuda(job, cudaMalloc(&job.grads, job.opt.count * sizeof(float)), "cudaMalloc(grads)");
  CheckCuda(job, cudaMalloc(&job.activations, 4096 * sizeof(float)), "cudaMalloc(activations)");
  CheckCuda(job, cudaMalloc(&job.buffers, 256 * sizeof(float)), "cudaMalloc(buffers)");
  CheckCuda(job, cudaMallocHost(&job.loss_host, sizeof(float)), "cudaMallocHost");
  CheckCuda(job, cudaMemset(job.activations, 0, 4096 * sizeof(float)), "cudaMemset");
  CheckCuda(job, cudaMemset(job.buffers, 0, 256 * sizeof(float)), "cudaMemset");
  job.grads_init.assign(job.opt.count, static_cast<float>(job.env.rank + 1));

  PlantTransportHang(job.opt);
  ncclUniqueId id{};
  std::string error;
  if (!examples::ExchangeUniqueId(job.env, &id, 120, &error)) Die(job, error);
  if (job.opt.comm_name.empty()) {
    CheckNccl(job, ncclCommInitRank(&job.world, job.env.world_size, id, job.env.rank), "ncclCommInitRank");
  } else {  // named as a framework names its groups (torch: after the process group)
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.commName = job.opt.comm_name.c_str();
    CheckNccl(job, ncclCommInitRankConfig(&job.world, job.env.world_size, id, job.env.rank, &config),
              "ncclCommInitRankConfig");
  }
  int tp = job.opt.tp;
  if (tp > 1 && tp < job.env.world_size && job.env.world_size % tp == 0) {
    CheckNccl(job, ncclCommSplit(job.world, job.env.rank / tp, job.env.rank, &job.tp, nullptr), "ncclCommSplit");
  }
}

void TearDown(Job& job) {
  CheckCuda(job, cudaStreamSynchronize(job.stream), "cudaStreamSynchronize");
  if (job.tp != nullptr) CheckNccl(job, ncclCommDestroy(job.tp), "ncclCommDestroy(tp)");
  CheckNccl(job, ncclCommDestroy(job.world), "ncclCommDestroy(world)");
  cudaFree(job.grads);
  cudaFree(job.activations);
  cudaFree(job.buffers);
  cudaFreeHost(job.loss_host);
  cudaStreamDestroy(job.stream);
}

// Evaluation or a new parallel group mid-run: `extra_comms` communicators split from the world
// (every rank, one color), one AllReduce each, then destroyed. Tests use it to make the watcher
// need more shared memory after the run started.
void UseExtraComms(Job& job) {
  std::vector<ncclComm_t> comms(job.opt.extra_comms, nullptr);
  for (ncclComm_t& comm : comms) {
    CheckNccl(job, ncclCommSplit(job.world, 0, job.env.rank, &comm, nullptr), "ncclCommSplit(extra)");
    CheckNccl(job, ncclAllReduce(job.activations, job.activations, 4096, ncclFloat32, ncclSum, comm, job.stream),
              "ncclAllReduce(extra)");
  }
  CheckCuda(job, cudaStreamSynchronize(job.stream), "cudaStreamSynchronize");
  for (ncclComm_t comm : comms) CheckNccl(job, ncclCommDestroy(comm), "ncclCommDestroy(extra)");
}

int Train(Job& job) {
  const int n = job.env.world_size;
  const float expected = n * (n + 1) / 2.0f;
  for (int step = 0; step < job.opt.steps; ++step) {
    // Uneven inputs: this rank's data ran out; it tears down and exits 0 while the others go on.
    if (job.env.rank == job.opt.exit_rank && step > job.opt.exit_step) break;
    LoadBatch(job, step);
    if (step == job.opt.extra_comms_step && job.opt.extra_comms > 0) UseExtraComms(job);
    Forward(job, step);
    Backward(job, step);
    float loss = ReadLoss(job, step);
    CheckAsyncErrors(job);
    if (loss != expected) {
      std::fprintf(stderr, "[rank %d] step %d: gradient AllReduce gave %g, expected %g\n", job.env.rank, step, loss,
                   expected);
      return 3;
    }
    if (job.env.rank == 0 && !job.opt.quiet && (step % 10 == 0 || step + 1 == job.opt.steps)) {
      std::printf("[rank 0] step %d/%d ok (allreduce %g)\n", step + 1, job.opt.steps, loss);
      std::fflush(stdout);
    }
  }
  return 0;
}

// Background threads that only wait, like a real trainer's data-loader, logging and
// heartbeat threads. They block on a condition variable that is never signalled.
__attribute__((noinline)) void ParkForever() {
  // Never destroyed: destroying a condition variable with waiters at exit could block.
  static auto* mu = new std::mutex;
  static auto* never = new std::condition_variable;
  std::unique_lock<std::mutex> lock(*mu);
  for (;;) never->wait(lock);
}

// A thread with every signal blocked: a stack sampler cannot interrupt it and must report it
// as not answering instead of waiting for it.
__attribute__((noinline)) void SignalDeafThread() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, nullptr);
  pthread_setname_np(pthread_self(), "signal-deaf");
  ParkForever();
}

void StartBackgroundThreads(const Options& opt) {
  if (opt.blocked_thread) std::thread(SignalDeafThread).detach();
  for (int i = 0; i < opt.idle_threads; ++i) std::thread(ParkForever).detach();
}

void AddFlags(CLI::App& app, Options& o) {
  app.add_option("--steps", o.steps, "training steps")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--step-ms", o.step_ms, "mean simulated compute per step, ms")->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--jitter", o.jitter, "compute jitter as a fraction of the mean (0..0.99)")
      ->check(CLI::Range(0.0, 0.99))->capture_default_str();
  app.add_option("--bcast-every", o.bcast_every, "broadcast buffers every N steps")->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--tp", o.tp, "tensor-parallel group size for the split communicator (1 = none)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--count", o.count, "gradient elements")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--straggler-rank", o.straggler_rank, "rank that stalls in data loading (field report 2)");
  app.add_option("--straggler-step", o.straggler_step, "step at which it stalls");
  app.add_option("--straggler-sec", o.straggler_sec, "how long it stalls, seconds")->capture_default_str();
  app.add_option("--extra-bcast-rank", o.extra_bcast_rank, "rank that issues one extra Broadcast (field report 5)");
  app.add_option("--extra-bcast-step", o.extra_bcast_step, "step of the extra Broadcast");
  app.add_option("--mismatch-rank", o.mismatch_rank, "rank whose gradient AllReduce differs");
  app.add_option("--mismatch-step", o.mismatch_step, "step of the mismatch");
  app.add_option("--mismatch-kind", o.mismatch_kind, "count or dtype")->check(CLI::IsMember({"count", "dtype"}))
      ->capture_default_str();
  app.add_option("--transport-hang", o.transport_hang,
                 "sim only: 'init' or a step whose gradient AllReduce never completes (sets NCCLSIM_FAULT)");
  app.add_flag("--blocked-thread", o.blocked_thread, "start a parked thread with every signal blocked");
  app.add_option("--idle-threads", o.idle_threads, "start this many parked idle threads");
  app.add_option("--stuck-sync-rank", o.stuck_sync_rank,
                 "rank whose stream stops in a GPU op that never finishes (not NCCL) before the loss read-back");
  app.add_option("--stuck-sync-step", o.stuck_sync_step, "step at which it stops")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--exit-rank", o.exit_rank,
                 "rank whose data runs out first (uneven inputs): it stops after --exit-step and exits cleanly");
  app.add_option("--exit-step", o.exit_step, "the last step that rank runs");
  app.add_option("--abort-rank", o.abort_rank, "rank that crashes (abort) in backward, before its gradient AllReduce");
  app.add_option("--abort-step", o.abort_step, "step at which it crashes");
  app.add_option("--extra-comms", o.extra_comms, "communicators split, used once and destroyed at --extra-comms-step")
      ->check(CLI::Range(0, 1024));
  app.add_option("--extra-comms-step", o.extra_comms_step, "step of --extra-comms");
  app.add_flag("--own-sigterm-handler", o.own_sigterm, "install a SIGTERM handler that exits 7 (a framework's own)");
  app.add_flag("--quiet", o.quiet, "print nothing on success");
  app.add_option("--comm-name", o.comm_name,
                 "create the world communicator with ncclCommInitRankConfig and this ncclConfig_t.commName "
                 "(the tp split stays unnamed)");
}

}  // namespace

// A job's own SIGTERM handler (a framework saving a checkpoint, then leaving): says so and
// exits 7. Installed before the first communicator, as frameworks do at start.
void OwnSigtermHandler(int) {
  static const char kLine[] = "ddp_loop: own SIGTERM handler ran\n";
  ssize_t ignored = write(STDERR_FILENO, kLine, sizeof kLine - 1);
  (void)ignored;
  _exit(7);
}

void InstallOwnSigtermHandler() {
  struct sigaction action = {};
  action.sa_handler = OwnSigtermHandler;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
}

int main(int argc, char** argv) {
  Job job;
  CLI::App app{"DDP-shaped training loop over NCCL; reads RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT."};
  AddFlags(app, job.opt);
  CLI11_PARSE(app, argc, argv);
  if (!job.opt.transport_hang.empty() && job.opt.transport_hang != "init" &&
      job.opt.transport_hang.find_first_not_of("0123456789") != std::string::npos) {
    std::fprintf(stderr, "ddp_loop: --transport-hang takes 'init' or a step number\n");
    return 2;
  }
  std::string error;
  if (!examples::ReadJobEnv(&job.env, &error)) {
    std::fprintf(stderr, "ddp_loop: %s\n", error.c_str());
    return 2;
  }
  job.rng.seed(1234u + static_cast<unsigned>(job.env.rank));
  if (job.opt.own_sigterm) InstallOwnSigtermHandler();
  StartBackgroundThreads(job.opt);
  SetUp(job);
  int rc = Train(job);
  if (rc == 0) TearDown(job);
  return rc;
}
