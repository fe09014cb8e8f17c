// Send/Recv rendezvous and NCCL group semantics.
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <thread>
#include <unistd.h>
#include <vector>

#include "multiprocess.h"

using simtest::Checker;

namespace {

struct Setup {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

bool Init(Checker& check, const ncclUniqueId& id, int n, int rank, Setup* s) {
  if (!check(ncclCommInitRank(&s->comm, n, id, rank) == ncclSuccess, "init")) return false;
  return check(cudaStreamCreate(&s->stream) == cudaSuccess, "stream create");
}

int Finish(Checker& check, Setup& s) {
  check(ncclCommDestroy(s.comm) == ncclSuccess, "destroy");
  cudaStreamDestroy(s.stream);
  return check.failures() == 0 ? 0 : 1;
}

template <typename Body>
void Run(int n, Body body, int timeout_ms = 30000) {
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(n, [&](int rank) { return body(id, n, rank); }, timeout_ms);
  result.segment_left = simtest::RemoveSegment(id);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

// Ring exchange: each rank sends to rank+1 and receives from rank-1, in one group.
// Large enough to need many chunks, so sends and receives must progress together.
int RingBody(const ncclUniqueId& id, int n, int rank) {
  Checker check(rank);
  Setup s;
  if (!Init(check, id, n, rank, &s)) return 1;
  const size_t count = 100000;
  for (int round = 0; round < 2; ++round) {
    std::vector<int64_t> send(count), recv(count, -1), self(count, -1);
    for (size_t i = 0; i < count; ++i) send[i] = rank * 1000000 + static_cast<int64_t>(i) + round;
    const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
    check(ncclGroupStart() == ncclSuccess, "group start");
    ncclSend(send.data(), count, ncclInt64, next, s.comm, s.stream);
    ncclRecv(recv.data(), count, ncclInt64, prev, s.comm, s.stream);
    ncclSend(send.data(), count, ncclInt64, rank, s.comm, s.stream);  // to self
    ncclRecv(self.data(), count, ncclInt64, rank, s.comm, s.stream);
    check(ncclGroupEnd() == ncclSuccess, "group end");
    check(cudaStreamSynchronize(s.stream) == cudaSuccess, "sync");
    bool ok = true, self_ok = true;
    for (size_t i = 0; i < count; ++i) {
      ok &= recv[i] == prev * 1000000 + static_cast<int64_t>(i) + round;
      self_ok &= self[i] == send[i];
    }
    check(ok, "ring data from previous rank");
    check(self_ok, "send to self");
  }
  return Finish(check, s);
}

// A send outside a group does not complete until the peer posts the receive.
int LoneSendBody(const ncclUniqueId& id, int n, int rank, int pipe_fd[2]) {
  Checker check(rank);
  Setup s;
  if (!Init(check, id, n, rank, &s)) return 1;
  std::vector<float> buf(1000, static_cast<float>(rank + 1));
  if (rank == 0) {
    close(pipe_fd[0]);
    check(ncclSend(buf.data(), buf.size(), ncclFloat32, 1, s.comm, s.stream) == ncclSuccess, "send");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    check(cudaStreamQuery(s.stream) == cudaErrorNotReady, "lone send must wait for its receive");
    const char go = 1;
    check(write(pipe_fd[1], &go, 1) == 1, "signal peer");
    close(pipe_fd[1]);
  } else {
    close(pipe_fd[1]);
    char go = 0;
    check(read(pipe_fd[0], &go, 1) == 1, "wait for peer");
    close(pipe_fd[0]);
    check(ncclRecv(buf.data(), buf.size(), ncclFloat32, 0, s.comm, s.stream) == ncclSuccess, "recv");
  }
  check(cudaStreamSynchronize(s.stream) == cudaSuccess, "sync");
  if (rank == 1) check(buf[999] == 1.0f, "received rank 0's data");
  return Finish(check, s);
}

// Nested groups launch at the outermost GroupEnd; GroupSimulateEnd launches nothing.
int GroupBody(const ncclUniqueId& id, int n, int rank) {
  Checker check(rank);
  Setup s;
  if (!Init(check, id, n, rank, &s)) return 1;
  std::vector<int32_t> send(64, rank + 1), recv(64, -7), simulated(64, -7);

  check(ncclGroupStart() == ncclSuccess, "outer start");
  check(ncclGroupStart() == ncclSuccess, "inner start");
  ncclAllReduce(send.data(), recv.data(), 64, ncclInt32, ncclSum, s.comm, s.stream);
  check(ncclGroupEnd() == ncclSuccess, "inner end");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  check(cudaStreamQuery(s.stream) == cudaSuccess && recv[0] == -7, "nothing launched before the outermost GroupEnd");
  check(ncclGroupEnd() == ncclSuccess, "outer end");
  check(cudaStreamSynchronize(s.stream) == cudaSuccess, "sync");
  check(recv[0] == n * (n + 1) / 2, "grouped allreduce result");

  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  check(ncclGroupStart() == ncclSuccess, "sim start");
  ncclAllReduce(send.data(), simulated.data(), 64, ncclInt32, ncclSum, s.comm, s.stream);
  check(ncclGroupSimulateEnd(&info) == ncclSuccess, "simulate end");
  check(info.estimatedTime > 0, "estimated time filled");
  // Had the simulated op been launched, it would have taken this position on every
  // rank and `simulated` would hold the sum.
  std::vector<int32_t> after(64, -7);
  ncclAllReduce(send.data(), after.data(), 64, ncclInt32, ncclMax, s.comm, s.stream);
  check(cudaStreamSynchronize(s.stream) == cudaSuccess, "sync after simulate");
  check(simulated[0] == -7, "GroupSimulateEnd launched nothing");
  check(after[0] == n, "next collective unaffected");

  check(ncclGroupEnd() == ncclInvalidUsage, "GroupEnd without GroupStart is refused");
  return Finish(check, s);
}

// Collectives issued on two streams of one communicator still pair up in call order,
// whichever stream gets to its host function first.
int TwoStreamsBody(const ncclUniqueId& id, int n, int rank) {
  Checker check(rank);
  Setup s;
  if (!Init(check, id, n, rank, &s)) return 1;
  cudaStream_t other;
  cudaStreamCreate(&other);
  const int rounds = 20;
  std::vector<int32_t> in(rounds * 2), sums(rounds, -1), maxes(rounds, -1);
  for (int i = 0; i < rounds; ++i) {
    in[2 * i] = rank + i;
    in[2 * i + 1] = rank * 10 + i;
    ncclAllReduce(&in[2 * i], &sums[i], 1, ncclInt32, ncclSum, s.comm, (i + rank) % 2 ? s.stream : other);
    ncclAllReduce(&in[2 * i + 1], &maxes[i], 1, ncclInt32, ncclMax, s.comm, (i + rank) % 2 ? other : s.stream);
  }
  check(cudaStreamSynchronize(s.stream) == cudaSuccess && cudaStreamSynchronize(other) == cudaSuccess, "sync");
  bool ok = true;
  for (int i = 0; i < rounds; ++i) ok &= sums[i] == n * (n - 1) / 2 + n * i && maxes[i] == (n - 1) * 10 + i;
  check(ok, "call order decides pairing across streams");
  cudaStreamDestroy(other);
  return Finish(check, s);
}

}  // namespace

TEST_CASE("collectives on several streams of one comm pair up in call order", "[sim_nccl][group]") {
  Run(2, TwoStreamsBody);
  Run(4, TwoStreamsBody);
}

TEST_CASE("send/recv ring in a group, 2/4/8 ranks", "[sim_nccl][p2p]") {
  for (int n : {2, 4, 8}) Run(n, RingBody);
}

TEST_CASE("a lone send blocks until the receive is posted", "[sim_nccl][p2p]") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  Run(2, [&](const ncclUniqueId& id, int n, int rank) { return LoneSendBody(id, n, rank, fds); });
  close(fds[0]);
  close(fds[1]);
}

TEST_CASE("groups nest, launch at the outermost end, and SimulateEnd launches nothing", "[sim_nccl][group]") {
  Run(3, GroupBody);
}

namespace {

// nccl-tests' pattern: one thread drives every device's rank in one group on the NULL (legacy)
// stream, then synchronizes each device's legacy stream.
int LegacyStreamGroupBody(int ndev) {
  Checker check(0);
  std::vector<ncclComm_t> comms(ndev);
  if (!check(ncclCommInitAll(comms.data(), ndev, nullptr) == ncclSuccess, "InitAll")) return 1;
  std::vector<int> in(ndev), out(ndev, -1);
  for (int round = 0; round < 3; ++round) {
    check(ncclGroupStart() == ncclSuccess, "group start");
    for (int d = 0; d < ndev; ++d) {
      in[d] = d + round;
      cudaSetDevice(d);
      check(ncclAllReduce(&in[d], &out[d], 1, ncclInt32, ncclSum, comms[d], nullptr) == ncclSuccess, "allreduce");
    }
    check(ncclGroupEnd() == ncclSuccess, "group end");
    for (int d = 0; d < ndev; ++d) {
      cudaSetDevice(d);
      check(cudaStreamSynchronize(nullptr) == cudaSuccess, "sync the device's legacy stream");
      check(out[d] == ndev * (ndev - 1) / 2 + ndev * round, "sum over devices");
    }
  }
  for (ncclComm_t c : comms) ncclCommDestroy(c);
  return check.failures() == 0 ? 0 : 1;
}

}  // namespace

TEST_CASE("one thread drives several ranks in one group on the NULL stream", "[sim_nccl][group]") {
  for (int ndev : {2, 4}) {
    auto result = simtest::RunRanks(1, [&](int) { return LegacyStreamGroupBody(ndev); }, 20000);
    INFO("devices " << ndev << ": " << result.Describe());
    REQUIRE(result.all_ok());
  }
}
