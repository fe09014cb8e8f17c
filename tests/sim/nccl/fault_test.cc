// Hangs, aborts, NCCLSIM_FAULT kinds, mismatches and NCCLSIM_NOOP.
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>

#include "fault_spec.h"
#include "multiprocess.h"

using simtest::Checker;
using simtest::StreamFinishes;
using simtest::ScopedEnv;
using namespace std::chrono_literals;

namespace {

simtest::RunResult RunWith(int n, const std::function<int(const ncclUniqueId&, int)>& body) {
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(n, [&](int rank) { return body(id, rank); }, 30000);
  result.segment_left = simtest::RemoveSegment(id);
  return result;
}

// Runs one int allreduce; true if the stream finished it within `wait` (see StreamFinishes).
bool AllReduceFinishes(ncclComm_t comm, cudaStream_t stream, Checker& check, std::chrono::milliseconds wait,
                       bool* aborted) {
  int in = 1, out = 0;
  ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, stream);
  return StreamFinishes(comm, stream, check, wait, aborted);
}

// Joins the 2-rank communicator of `id` and creates a stream; false if init failed.
bool JoinPair(const ncclUniqueId& id, int rank, Checker& check, ncclComm_t* comm, cudaStream_t* stream) {
  if (!check(ncclCommInitRank(comm, 2, id, rank) == ncclSuccess, "init")) return false;
  cudaStreamCreate(stream);
  return true;
}

int HangBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  if (!JoinPair(id, rank, check, &comm, &stream)) return 1;
  bool aborted = false;
  check(AllReduceFinishes(comm, stream, check, 5s, &aborted), "collective #1 completes");
  check(!AllReduceFinishes(comm, stream, check, 2s, &aborted), "collective #2 hangs");
  check(aborted, "aborted");
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

int MismatchBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  if (!JoinPair(id, rank, check, &comm, &stream)) return 1;
  float buf[4] = {1, 2, 3, 4};
  if (rank == 0) ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, stream);
  else ncclBroadcast(buf, buf, 4, ncclFloat32, 0, comm, stream);
  bool aborted = false;
  check(!StreamFinishes(comm, stream, check, 1500ms, &aborted), "mismatched calls never complete");
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

// mismatch_completes:seq=2: #2 is an AllReduce on rank 0 and a Broadcast on rank 1.
int MismatchCompletesBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  if (!JoinPair(id, rank, check, &comm, &stream)) return 1;
  bool aborted = false;
  check(AllReduceFinishes(comm, stream, check, 5s, &aborted), "#1 completes");
  float in[4] = {1, 2, 3, 4}, out[4] = {-1, -1, -1, -1};
  if (rank == 0) ncclAllReduce(in, out, 4, ncclFloat32, ncclSum, comm, stream);
  else ncclBroadcast(in, out, 4, ncclFloat32, 0, comm, stream);
  check(StreamFinishes(comm, stream, check, 5s, &aborted), "the mismatched #2 completes");
  check(out[0] == -1 && out[3] == -1, "no data moved for the mismatched pair");
  int mine = rank + 1, sum = 0;
  ncclAllReduce(&mine, &sum, 1, ncclInt32, ncclSum, comm, stream);
  check(StreamFinishes(comm, stream, check, 5s, &aborted), "#3 completes");
  check(sum == 3, "#3 sums correctly after the mismatch (" + std::to_string(sum) + ")");
  if (!aborted) ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

int SlowErrorBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  if (!JoinPair(id, rank, check, &comm, &stream)) return 1;
  bool aborted = false;
  ncclResult_t async = ncclInternalError;
  check(AllReduceFinishes(comm, stream, check, 5s, &aborted), "#1");
  check(ncclCommGetAsyncError(comm, &async) == ncclSuccess && async == ncclSuccess, "no error before #2");
  const auto start = std::chrono::steady_clock::now();
  check(AllReduceFinishes(comm, stream, check, 10s, &aborted), "#2 (slow) completes");
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  check(took >= 400ms, "slow fault delays #2 by its ms (took " + std::to_string(took.count()) + " ms)");
  check(AllReduceFinishes(comm, stream, check, 5s, &aborted), "#3");
  ncclCommGetAsyncError(comm, &async);
  check(async == (rank == 1 ? ncclRemoteError : ncclSuccess), "error fault: rank 1 reports ncclRemoteError from #3 on");
  if (!aborted) ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

int DieBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  if (!JoinPair(id, rank, check, &comm, &stream)) return 1;
  bool aborted = false;
  check(AllReduceFinishes(comm, stream, check, 5s, &aborted), "#1");
  // Rank 1 is SIGKILLed inside #2; its peer hangs there.
  check(!AllReduceFinishes(comm, stream, check, 1500ms, &aborted), "peer of a dead rank hangs");
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

int InitHangBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  check(ncclCommInitRankConfig(&comm, 2, id, rank, &config) == ncclInProgress, "nonblocking init");
  std::this_thread::sleep_for(1500ms);
  ncclResult_t state = ncclSuccess;
  check(ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress, "init never finishes");
  check(ncclCommAbort(comm) == ncclSuccess, "abort during init");
  return check.failures() == 0 ? 0 : 1;
}

int NoopBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  if (!JoinPair(id, rank, check, &comm, &stream)) return 1;
  int in = 5, out = -1;
  // Rank 0 calls one collective more than rank 1: with real work this would hang.
  for (int i = 0; i < (rank == 0 ? 2 : 1); ++i)
    check(ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, stream) == ncclSuccess, "noop allreduce");
  ncclGroupStart();
  ncclSend(&in, 1, ncclInt32, 1 - rank, comm, stream);
  check(ncclGroupEnd() == ncclSuccess, "noop group");
  check(cudaStreamSynchronize(stream) == cudaSuccess, "sync returns");
  check(out == -1, "nothing executed");
  check(ncclAllReduce(&in, &out, 1, ncclInt32, ncclMaxRedOp, comm, stream) == ncclInvalidArgument,
        "noop still validates");
  ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

// hang:seq=4 where #1 and #2 are the Send and the Recv of a group: collective #3 completes and #4
// hangs, which it would not if P2P operations took no number.
int P2pCountedBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  if (!JoinPair(id, rank, check, &comm, &stream)) return 1;
  int mine = rank, theirs = -1;
  ncclGroupStart();
  ncclSend(&mine, 1, ncclInt32, 1 - rank, comm, stream);
  ncclRecv(&theirs, 1, ncclInt32, 1 - rank, comm, stream);
  ncclGroupEnd();
  bool aborted = false;
  check(StreamFinishes(comm, stream, check, 5s, &aborted) && theirs == 1 - rank, "#1-#2 send/recv complete");
  check(AllReduceFinishes(comm, stream, check, 5s, &aborted), "#3 completes");
  check(!AllReduceFinishes(comm, stream, check, 1500ms, &aborted), "#4 hangs");
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

// hang:seq=2,rank=0 where #2 is rank 0's Send: it never delivers, so rank 1's Recv blocks too.
int HungSendBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  if (!JoinPair(id, rank, check, &comm, &stream)) return 1;
  bool aborted = false;
  check(AllReduceFinishes(comm, stream, check, 5s, &aborted), "#1 completes");
  int value = 7, got = -1;
  if (rank == 0) ncclSend(&value, 1, ncclInt32, 1, comm, stream);
  else ncclRecv(&got, 1, ncclInt32, 0, comm, stream);
  check(!StreamFinishes(comm, stream, check, 1500ms, &aborted), rank == 0 ? "the Send hangs" : "its Recv waits");
  check(got == -1, "nothing delivered");
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

// Comm B's collective waits on the stream behind comm A's hung one; aborting B must return
// at once (B's op has not even started), and aborting A then drains the stream.
int AbortQueuedBody(const ncclUniqueId& id_a, const ncclUniqueId& id_b) {
  Checker check(0);
  ncclComm_t a = nullptr, b = nullptr;
  check(ncclCommInitRank(&a, 1, id_a, 0) == ncclSuccess, "init A");
  check(ncclCommInitRank(&b, 1, id_b, 0) == ncclSuccess, "init B");
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  int in = 1, out_a = 0, out_b = 0;
  ncclAllReduce(&in, &out_a, 1, ncclInt32, ncclSum, a, stream);  // hangs: hang:seq=1,comm=0
  ncclAllReduce(&in, &out_b, 1, ncclInt32, ncclSum, b, stream);
  auto synced = std::async(std::launch::async, [stream] { return cudaStreamSynchronize(stream); });
  check(synced.wait_for(500ms) == std::future_status::timeout, "the stream is blocked in A's collective");
  auto abort_b = std::async(std::launch::async, [b] { return ncclCommAbort(b); });
  check(abort_b.wait_for(2s) == std::future_status::ready, "ncclCommAbort(B) returns while the stream is stuck");
  check(ncclCommAbort(a) == ncclSuccess, "abort A");
  check(synced.wait_for(5s) == std::future_status::ready, "the stream drains after A's abort");
  check(out_b == 0, "B's aborted collective did not run");
  if (abort_b.wait_for(5s) == std::future_status::ready) check(abort_b.get() == ncclSuccess, "abort B result");
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

}  // namespace

TEST_CASE("NCCLSIM_FAULT seq counts Send and Recv too", "[sim_nccl][fault]") {
  {
    ScopedEnv fault("NCCLSIM_FAULT", "hang:seq=4");
    const auto result = RunWith(2, P2pCountedBody);
    INFO(result.Describe());
    REQUIRE(result.all_ok());
  }
  ScopedEnv fault("NCCLSIM_FAULT", "hang:seq=2,rank=0");
  const auto result = RunWith(2, HungSendBody);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("ncclCommAbort never blocks, even with the comm's op stuck behind a hung one", "[sim_nccl][fault]") {
  ScopedEnv fault("NCCLSIM_FAULT", "hang:seq=1,comm=0");
  const ncclUniqueId a = simtest::NewUniqueId(), b = simtest::NewUniqueId();
  auto result = simtest::RunRanks(1, [&](int) { return AbortQueuedBody(a, b); }, 20000);
  result.segment_left = simtest::RemoveSegment(a) || simtest::RemoveSegment(b);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("hang fault: collective #N never completes until ncclCommAbort", "[sim_nccl][fault]") {
  ScopedEnv fault("NCCLSIM_FAULT", "hang:seq=2");
  const auto result = RunWith(2, HangBody);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("mismatched collectives hang until abort", "[sim_nccl][fault]") {
  const auto result = RunWith(2, MismatchBody);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("mismatch_completes fault: a mismatched pair completes, moving no data", "[sim_nccl][fault]") {
  ScopedEnv fault("NCCLSIM_FAULT", "mismatch_completes:seq=2");
  const auto result = RunWith(2, MismatchCompletesBody);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("slow and error faults", "[sim_nccl][fault]") {
  ScopedEnv fault("NCCLSIM_FAULT", "slow:seq=2,ms=400;error:seq=3,rank=1,comm=0");
  const auto result = RunWith(2, SlowErrorBody);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("die fault: the rank SIGKILLs itself inside collective #N", "[sim_nccl][fault]") {
  ScopedEnv fault("NCCLSIM_FAULT", "die:seq=2,rank=1");
  const auto result = RunWith(2, DieBody);
  INFO(result.Describe());
  REQUIRE(result.children.size() == 2);
  CHECK(result.children[0].ok());
  CHECK((!result.children[1].exited && result.children[1].signal == SIGKILL));
  CHECK_FALSE(result.segment_left);  // unlinked once every rank had attached
}

TEST_CASE("seq=init faults: hang keeps init in progress, die kills the rank in init", "[sim_nccl][fault]") {
  {
    ScopedEnv fault("NCCLSIM_FAULT", "hang:seq=init");
    const auto result = RunWith(2, InitHangBody);
    INFO(result.Describe());
    REQUIRE(result.all_ok());
  }
  ScopedEnv fault("NCCLSIM_FAULT", "die:seq=init,rank=0");
  const auto result = RunWith(1, [](const ncclUniqueId& id, int) {
    ncclComm_t comm = nullptr;
    ncclCommInitRank(&comm, 1, id, 0);
    return 0;  // not reached
  });
  REQUIRE(result.children.size() == 1);
  CHECK(result.children[0].signal == SIGKILL);
  CHECK_FALSE(result.segment_left);
}

TEST_CASE("malformed NCCLSIM_FAULT fails init with ncclInvalidArgument", "[sim_nccl][fault]") {
  ScopedEnv fault("NCCLSIM_FAULT", "hang:seq=two");
  const auto result = RunWith(1, [](const ncclUniqueId& id, int) {
    Checker check(0);
    ncclComm_t comm = nullptr;
    check(ncclCommInitRank(&comm, 1, id, 0) == ncclInvalidArgument, "init refused");
    check(std::string(ncclGetLastError(nullptr)).find("NCCLSIM_FAULT") != std::string::npos, "last error names it");
    return check.failures();
  });
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("fault grammar", "[sim_nccl][fault]") {
  std::string error;
  auto faults = ncclsim::ParseFaultSpec("hang:seq=3,rank=1;slow:seq=2,ms=50,comm=1;die:seq=init", &error);
  REQUIRE(faults.has_value());
  REQUIRE(faults->size() == 3);
  CHECK((*faults)[0].kind == ncclsim::FaultKind::kHang);
  CHECK((*faults)[0].seq == 3);
  CHECK((*faults)[0].rank == 1);
  CHECK((*faults)[1].ms == 50);
  CHECK((*faults)[1].comm_index == 1);
  CHECK((*faults)[2].at_init);
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kHang, 0, 1, ncclsim::FaultPoint{3}) != nullptr);
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kHang, 0, 0, ncclsim::FaultPoint{3}) == nullptr);
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kSlow, 0, 0, ncclsim::FaultPoint{2}) == nullptr);
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kDie, 5, 3, ncclsim::FaultPoint{0}) != nullptr);
  faults = ncclsim::ParseFaultSpec("mismatch_completes:seq=7,comm=0", &error);
  REQUIRE(faults.has_value());
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kMismatchCompletes, 0, 1, ncclsim::FaultPoint{7}) != nullptr);
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kMismatchCompletes, 0, 1, ncclsim::FaultPoint{6}) == nullptr);
  // replay=K: the K-th replay's ops, numbered from 1 by seq (default 1), whatever their seq.
  faults = ncclsim::ParseFaultSpec("hang:replay=3;die:replay=2,seq=4,rank=1", &error);
  REQUIRE(faults.has_value());
  CHECK((*faults)[0].replay == 3);
  CHECK((*faults)[0].seq == 1);
  CHECK((*faults)[1].seq == 4);
  using ncclsim::FaultPoint;
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kHang, 0, 0, FaultPoint{10, 3, 1}) != nullptr);
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kHang, 0, 0, FaultPoint{10, 3, 2}) == nullptr);
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kHang, 0, 0, FaultPoint{10, 2, 1}) == nullptr);
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kHang, 0, 0, FaultPoint{1, 0, 0}) == nullptr);
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kDie, 0, 1, FaultPoint{9, 2, 4}) != nullptr);
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kDie, 0, 0, FaultPoint{9, 2, 4}) == nullptr);
  // A seq fault matches a replayed op by its seq: replayed ops are numbered too.
  faults = ncclsim::ParseFaultSpec("hang:seq=9", &error);
  REQUIRE(faults.has_value());
  CHECK(ncclsim::FindFault(*faults, ncclsim::FaultKind::kHang, 0, 0, FaultPoint{9, 2, 4}) != nullptr);
  for (const char* bad : {"hang", "hang:", "freeze:seq=1", "hang:seq=0", "slow:seq=1", "hang:seq=1,ms=5",
                          "hang:seq=1,rank=-1", "hang:rank=1", "hang:seq=1;", "error:seq=init", "hang:seq=1,x=2",
                          "mismatch_completes:seq=init", "mismatch_completes:seq=2,ms=5", "hang:replay=0",
                          "hang:replay=x", "hang:replay=2,seq=init", "partition:hosts=a+b,replay=1"}) {
    INFO(bad);
    error.clear();
    CHECK(!ncclsim::ParseFaultSpec(bad, &error).has_value());
    CHECK(!error.empty());
  }
}

TEST_CASE("partition fault grammar", "[sim_nccl][fault]") {
  std::string error;
  auto faults = ncclsim::ParseFaultSpec("partition:hosts=host0+host1,seq=4;partition:hosts=a+b,seq=1,ms=250,rank=2",
                                        &error);
  REQUIRE(faults.has_value());
  REQUIRE(faults->size() == 2);
  CHECK((*faults)[0].kind == ncclsim::FaultKind::kPartition);
  CHECK((*faults)[0].host_a == "host0");
  CHECK((*faults)[0].host_b == "host1");
  CHECK((*faults)[0].seq == 4);
  CHECK(!(*faults)[0].has_ms);
  CHECK((*faults)[1].has_ms);
  CHECK((*faults)[1].ms == 250);
  CHECK((*faults)[1].rank == 2);
  for (const char* bad : {"partition:seq=1", "partition:hosts=a,seq=1", "partition:hosts=a+,seq=1",
                          "partition:hosts=+b,seq=1", "partition:hosts=a+a,seq=1", "partition:hosts=a+b+c,seq=1",
                          "partition:hosts=a+b", "partition:hosts=a+b,seq=init", "hang:seq=1,hosts=a+b"}) {
    INFO(bad);
    error.clear();
    CHECK(!ncclsim::ParseFaultSpec(bad, &error).has_value());
    CHECK(error.rfind("NCCLSIM_FAULT: ", 0) == 0);
  }
}

TEST_CASE("NCCLSIM_NOOP validates and returns without enqueuing", "[sim_nccl][noop]") {
  ScopedEnv noop("NCCLSIM_NOOP", "1");
  const auto result = RunWith(2, NoopBody);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}
