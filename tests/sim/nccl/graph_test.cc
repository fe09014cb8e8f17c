// NCCL ops in CUDA graphs: captured, not run; every launch replays them, matched across ranks
// like eager ops and numbered like them; NCCLSIM_FAULT reaches replays (replay=K).
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "multiprocess.h"

using simtest::Checker;
using simtest::ScopedEnv;
using simtest::StreamFinishes;
using namespace std::chrono_literals;

namespace {

constexpr int kCount = 300000;  // more than one staging round (128 KiB per rank)


cudaStream_t NonBlocking() {
  cudaStream_t s = nullptr;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  return s;
}

// One rank of the 2-rank communicator of `id`, with a stream of its own; `joined` is false
// (a failure counted) when init failed.
struct PairRank {
  PairRank(const ncclUniqueId& id, int r) : check(r), rank(r) {
    cudaSetDevice(rank);
    joined = check(ncclCommInitRank(&comm, 2, id, rank) == ncclSuccess, "init");
    s = NonBlocking();
  }
  Checker check;
  ncclComm_t comm = nullptr;
  cudaStream_t s = nullptr;
  int rank;
  bool joined = false;
};

// Runs body(rank) on both ranks of a new communicator, with NCCLSIM_FAULT=`fault` if given; a rank
// passes when its checks all hold.
simtest::RunResult RunPair(const std::function<void(PairRank&)>& body, const char* fault = nullptr) {
  std::unique_ptr<ScopedEnv> env;
  if (fault != nullptr) env = std::make_unique<ScopedEnv>("NCCLSIM_FAULT", fault);
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(2, [&](int rank) {
    PairRank r(id, rank);
    if (r.joined) body(r);
    return r.check.failures();
  }, 30000);
  result.segment_left = simtest::RemoveSegment(id);
  return result;
}

void RequireAllPass(const std::function<void(PairRank&)>& body, const char* fault = nullptr) {
  const auto result = RunPair(body, fault);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

// Ends the capture on `s` and instantiates it; the graph itself is destroyed at once, as torch
// does: the executable graph must keep what the NCCL ops need.
cudaGraphExec_t EndAndInstantiate(cudaStream_t s, Checker& check) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check(cudaStreamEndCapture(s, &graph) == cudaSuccess, "end capture");
  check(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch) == cudaSuccess,
        "instantiate");
  check(cudaGraphDestroy(graph) == cudaSuccess, "graph destroy");
  return exec;
}

bool AllEqual(const std::vector<float>& v, float want) {
  for (float x : v) {
    if (x != want) return false;
  }
  return true;
}

// A graph of a host-to-device copy and an all-reduce, replayed on two streams in turn, with
// eager all-reduces in between: every replay copies and reduces again, in step across ranks.
void ReplayBody(PairRank& r) {
  auto& [check, comm, s, rank, joined] = r;
  cudaStream_t other = NonBlocking();
  std::vector<float> host(kCount), in(kCount), out(kCount, -1.0f);
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "begin capture");
  check(cudaMemcpyAsync(in.data(), host.data(), kCount * sizeof(float), cudaMemcpyDefault, s) == cudaSuccess,
        "captured copy");
  check(ncclAllReduce(in.data(), out.data(), kCount, ncclFloat32, ncclSum, comm, s) == ncclSuccess,
        "captured all-reduce");
  cudaGraphExec_t exec = EndAndInstantiate(s, check);
  check(AllEqual(out, -1.0f), "nothing ran at capture");
  for (int replay = 1; replay <= 10; ++replay) {
    std::fill(host.begin(), host.end(), static_cast<float>(rank + replay));
    cudaStream_t on = replay % 2 ? s : other;
    check(cudaGraphLaunch(exec, on) == cudaSuccess, "launch");
    check(cudaStreamSynchronize(on) == cudaSuccess, "sync");
    check(AllEqual(out, static_cast<float>(2 * replay + 1)), "replay " + std::to_string(replay) + " summed");
    if (replay % 3 == 0) {
      check(simtest::AllReduceSum(comm, s, rank + replay, check) == 2 * replay + 1,
            "eager all-reduce after replay " + std::to_string(replay));
    }
  }
  check(cudaGraphExecDestroy(exec) == cudaSuccess, "exec destroy");
  check(ncclCommDestroy(comm) == ncclSuccess, "destroy");
  cudaStreamDestroy(s);
  cudaStreamDestroy(other);
}

// A group captured whole: an all-reduce and a ring exchange (Send and Recv), replayed.
void GroupBody(PairRank& r) {
  auto& [check, comm, s, rank, joined] = r;
  cudaStream_t plain = NonBlocking();
  int value = 0, sum = 0, sent = 0, received = -1;
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess, "begin capture");
  check(ncclGroupStart() == ncclSuccess, "group start");
  ncclAllReduce(&value, &sum, 1, ncclInt32, ncclSum, comm, s);
  ncclSend(&sent, 1, ncclInt32, 1 - rank, comm, s);
  ncclRecv(&received, 1, ncclInt32, 1 - rank, comm, s);
  check(ncclGroupEnd() == ncclSuccess, "group end");
  cudaGraphExec_t exec = EndAndInstantiate(s, check);
  for (int replay = 1; replay <= 3; ++replay) {
    value = rank + replay;
    sent = 100 * replay + rank;
    check(cudaGraphLaunch(exec, s) == cudaSuccess, "launch");
    check(cudaStreamSynchronize(s) == cudaSuccess, "sync");
    check(sum == 2 * replay + 1, "replayed all-reduce");
    check(received == 100 * replay + 1 - rank, "replayed receive");
  }
  // Every stream of a group captures into one graph, or none does.
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess, "begin capture");
  ncclGroupStart();
  ncclAllReduce(&value, &sum, 1, ncclInt32, ncclSum, comm, s);
  ncclAllReduce(&value, &sum, 1, ncclInt32, ncclSum, comm, plain);
  check(ncclGroupEnd() == ncclInvalidUsage, "a group mixing captured and uncaptured streams is refused");
  check(std::string(ncclGetLastError(comm)).find("captured") != std::string::npos, "GetLastError says why");
  cudaGraph_t empty = nullptr;
  check(cudaStreamEndCapture(s, &empty) == cudaSuccess, "end capture");
  cudaGraphDestroy(empty);
  // Nothing of the refused group took a turn: the communicator is still in step.
  check(simtest::AllReduceSum(comm, plain, rank + 1, check) == 3, "eager all-reduce after the refusal");
  cudaGraphExecDestroy(exec);
  check(ncclCommDestroy(comm) == ncclSuccess, "destroy");
}

// Captures one graph of `ops` single-int all-reduces on `s`.
cudaGraphExec_t CaptureAllReduces(ncclComm_t comm, cudaStream_t s, int ops, int* in, int* out, Checker& check) {
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "begin capture");
  for (int i = 0; i < ops; ++i) ncclAllReduce(&in[i], &out[i], 1, ncclInt32, ncclSum, comm, s);
  return EndAndInstantiate(s, check);
}

// NCCLSIM_FAULT=hang:seq=4. #1 is eager, the capture takes no number, launches 1..3 are #2..#4:
// the third launch hangs, as an eager #4 would.
void SeqBody(PairRank& r) {
  auto& [check, comm, s, rank, joined] = r;
  int in = rank + 1, out = 0;
  check(simtest::AllReduceSum(comm, s, 1, check) == 2, "#1 (eager)");
  cudaGraphExec_t exec = CaptureAllReduces(comm, s, 1, &in, &out, check);
  bool aborted = false;
  for (int launch = 1; launch <= 3; ++launch) {
    out = 0;
    cudaGraphLaunch(exec, s);
    const bool finished = StreamFinishes(comm, s, check, launch < 3 ? 5000ms : 1500ms, &aborted);
    check(finished == (launch < 3), "launch " + std::to_string(launch) + (launch < 3 ? " completes" : " hangs"));
  }
  check(aborted, "the hung replay was aborted");
  cudaGraphExecDestroy(exec);
  cudaStreamDestroy(s);
}

// NCCLSIM_FAULT=hang:replay=2,seq=2 on a graph of two all-reduces: the second launch runs its
// first all-reduce and hangs in its second.
void ReplayHangBody(PairRank& r) {
  auto& [check, comm, s, rank, joined] = r;
  int in[2] = {rank + 1, 10 * (rank + 1)}, out[2] = {0, 0};
  cudaGraphExec_t exec = CaptureAllReduces(comm, s, 2, in, out, check);
  bool aborted = false;
  cudaGraphLaunch(exec, s);
  check(StreamFinishes(comm, s, check, 5000ms, &aborted), "launch 1 completes");
  check(out[0] == 3 && out[1] == 30, "launch 1 summed both");
  out[0] = out[1] = 0;
  cudaGraphLaunch(exec, s);
  check(!StreamFinishes(comm, s, check, 1500ms, &aborted), "launch 2 hangs");
  check(out[0] == 3, "launch 2 ran its first all-reduce");
  check(out[1] == 0, "launch 2 hung in its second");
  cudaGraphExecDestroy(exec);
  cudaStreamDestroy(s);
}

// NCCLSIM_FAULT=die:replay=2,rank=1: rank 1 kills itself in its second replay; rank 0 then waits
// in it for good.
void ReplayDieBody(PairRank& r) {
  auto& [check, comm, s, rank, joined] = r;
  int in = 1, out = 0;
  cudaGraphExec_t exec = CaptureAllReduces(comm, s, 1, &in, &out, check);
  bool aborted = false;
  cudaGraphLaunch(exec, s);
  check(StreamFinishes(comm, s, check, 5000ms, &aborted), "launch 1 completes");
  cudaGraphLaunch(exec, s);
  check(!StreamFinishes(comm, s, check, 2000ms, &aborted), "launch 2 never completes");
}

}  // namespace

TEST_CASE("a captured all-reduce runs at every launch, in step with eager ones", "[sim_nccl][graph]") {
  RequireAllPass(ReplayBody);
}

TEST_CASE("a captured group with point-to-point ops replays; mixed groups are refused", "[sim_nccl][graph]") {
  RequireAllPass(GroupBody);
}

TEST_CASE("replayed ops take NCCLSIM_FAULT numbers as eager ops do", "[sim_nccl][graph][fault]") {
  RequireAllPass(SeqBody, "hang:seq=4");
}

TEST_CASE("NCCLSIM_FAULT replay=K,seq=J hangs the J-th op of the K-th replay", "[sim_nccl][graph][fault]") {
  RequireAllPass(ReplayHangBody, "hang:replay=2,seq=2");
}

TEST_CASE("NCCLSIM_FAULT die:replay=K kills the rank in its K-th replay", "[sim_nccl][graph][fault]") {
  const auto result = RunPair(ReplayDieBody, "die:replay=2,rank=1");
  INFO(result.Describe());
  REQUIRE(result.children.size() == 2);
  CHECK(result.children[0].ok());
  CHECK(!result.children[1].exited);
  CHECK(result.children[1].signal == SIGKILL);
}

TEST_CASE("one-rank communicators: nonblocking capture, a replay after the communicator is gone",
          "[sim_nccl][graph]") {
  auto result = simtest::RunRanks(1, [](int rank) {
    Checker check(rank);
    const ncclUniqueId id = simtest::NewUniqueId();
    ncclComm_t comm = nullptr;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t state = ncclCommInitRankConfig(&comm, 1, id, 0, &config);
    while (state == ncclInProgress) ncclCommGetAsyncError(comm, &state);
    if (!check(state == ncclSuccess, "nonblocking init")) return 1;
    cudaStream_t s = NonBlocking();
    int in = 7, out = 0;
    check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess, "begin capture");
    // Captured work is recorded at the call, even on a nonblocking communicator.
    check(ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, s) == ncclSuccess, "captured at once");
    cudaGraphExec_t exec = EndAndInstantiate(s, check);
    check(cudaGraphLaunch(exec, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess, "replay");
    check(out == 7, "replayed");
    check(ncclCommDestroy(comm) == ncclSuccess, "destroy");
    out = 0;
    // The replay skips the destroyed communicator's op (one stderr line) instead of crashing.
    check(cudaGraphLaunch(exec, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess, "replay after");
    check(out == 0, "nothing ran for the destroyed communicator");
    cudaGraphExecDestroy(exec);
    return check.failures();
  });
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}
