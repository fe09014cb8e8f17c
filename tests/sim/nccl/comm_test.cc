// Communicator creation: split (and its identity), shrink, nonblocking init, InitAll,
// queries, argument errors.
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "comm_hash.h"
#include "multiprocess.h"

using simtest::AllReduceSum;
using simtest::Checker;

namespace {

// 4 ranks: split by parity with reversed keys, then a split where rank 3 opts out.
int SplitBody(const ncclUniqueId& id, int n, int rank) {
  Checker check(rank);
  cudaSetDevice(rank);
  ncclComm_t comm = nullptr;
  if (!check(ncclCommInitRank(&comm, n, id, rank) == ncclSuccess, "init")) return 1;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  int dev = -1;
  check(ncclCommCuDevice(comm, &dev) == ncclSuccess && dev == rank, "CuDevice is the device current at init");

  ncclComm_t half = nullptr;
  check(ncclCommSplit(comm, rank % 2, -rank, &half, nullptr) == ncclSuccess, "split by parity");
  int count = 0, child_rank = -1;
  ncclCommCount(half, &count);
  ncclCommUserRank(half, &child_rank);
  check(count == 2, "child has 2 ranks");
  check(child_rank == (rank < 2 ? 1 : 0), "keys order child ranks (reverse here)");
  const int sum = AllReduceSum(half, stream, rank, check);
  check(sum == (rank % 2 == 0 ? 0 + 2 : 1 + 3), "child allreduce sums the same-parity ranks");

  ncclComm_t most = nullptr;
  const int color = rank == 3 ? NCCL_SPLIT_NOCOLOR : 7;
  check(ncclCommSplit(comm, color, rank, &most, nullptr) == ncclSuccess, "second split");
  if (rank == 3) {
    check(most == nullptr, "NOCOLOR gives a NULL communicator");
  } else {
    check(AllReduceSum(most, stream, 1, check) == 3, "three ranks in the colored child");
    ncclCommDestroy(most);
  }
  check(AllReduceSum(comm, stream, 1, check) == 4, "parent still works");

  ncclComm_t shrunk = nullptr;
  int excluded = 0;
  check(ncclCommShrink(comm, &excluded, 1, &shrunk, nullptr, NCCL_SHRINK_DEFAULT) == ncclSuccess, "shrink");
  if (rank == 0) {
    check(shrunk == nullptr, "excluded rank gets no communicator");
  } else {
    int shrunk_rank = -1;
    ncclCommUserRank(shrunk, &shrunk_rank);
    check(shrunk_rank == rank - 1, "survivors renumbered");
    check(AllReduceSum(shrunk, stream, 1, check) == 3, "shrunk allreduce");
    ncclCommDestroy(shrunk);
  }
  ncclCommDestroy(half);
  ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> Matches(const std::string& text, const std::regex& re) {
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Nonblocking init: returns ncclInProgress, completes in the background; collectives
// then return ncclInProgress until enqueued.
int NonblockingBody(const ncclUniqueId& id, int n, int rank) {
  Checker check(rank);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(200));  // peers arrive late
  const ncclResult_t r = ncclCommInitRankConfig(&comm, n, id, rank, &config);
  check(r == ncclInProgress, "nonblocking init returns ncclInProgress");
  check(comm != nullptr, "comm handle returned at once");
  ncclResult_t state = ncclInProgress;
  for (int i = 0; i < 500 && state == ncclInProgress; ++i) {
    ncclCommGetAsyncError(comm, &state);
    if (state == ncclInProgress) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  check(state == ncclSuccess, "init completes");
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  int in = rank + 1, out = 0;
  check(ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, stream) == ncclInProgress,
        "nonblocking collective returns ncclInProgress");
  state = ncclInProgress;
  for (int i = 0; i < 500 && state == ncclInProgress; ++i) {
    ncclCommGetAsyncError(comm, &state);
    if (state == ncclInProgress) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  check(state == ncclSuccess, "collective enqueued");
  check(cudaStreamSynchronize(stream) == cudaSuccess && out == n * (n + 1) / 2, "result");
  ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

int InitAllBody() {
  Checker check(0);
  ncclComm_t comms[3] = {};
  const int devs[3] = {2, 0, 1};
  if (!check(ncclCommInitAll(comms, 3, devs) == ncclSuccess, "InitAll")) return 1;
  cudaStream_t streams[3];
  int in[3] = {1, 10, 100}, out[3] = {};
  for (int i = 0; i < 3; ++i) {
    int dev = -1, rank = -1;
    ncclCommCuDevice(comms[i], &dev);
    ncclCommUserRank(comms[i], &rank);
    check(dev == devs[i] && rank == i, "InitAll rank/device");
    cudaSetDevice(devs[i]);
    cudaStreamCreate(&streams[i]);
  }
  ncclGroupStart();
  for (int i = 0; i < 3; ++i) ncclAllReduce(&in[i], &out[i], 1, ncclInt32, ncclSum, comms[i], streams[i]);
  check(ncclGroupEnd() == ncclSuccess, "group end");
  for (int i = 0; i < 3; ++i) {
    check(cudaStreamSynchronize(streams[i]) == cudaSuccess, "sync");
    check(out[i] == 111, "one-process multi-device allreduce");
    ncclCommDestroy(comms[i]);
  }
  return check.failures() == 0 ? 0 : 1;
}

// Init calls inside a group, one process driving 2 ranks (what InitAll users hand-roll).
int GroupInitBody(const ncclUniqueId& id) {
  Checker check(0);
  ncclComm_t comms[2] = {};
  check(ncclGroupStart() == ncclSuccess, "group start");
  for (int i = 0; i < 2; ++i) {
    cudaSetDevice(i);
    check(ncclCommInitRank(&comms[i], 2, id, i) == ncclSuccess, "init in group");
  }
  check(ncclGroupEnd() == ncclSuccess, "group end completes the inits");
  int count = 0;
  check(comms[1] != nullptr && ncclCommCount(comms[1], &count) == ncclSuccess && count == 2, "usable");
  ncclCommDestroy(comms[0]);
  ncclCommDestroy(comms[1]);
  return check.failures() == 0 ? 0 : 1;
}

// InitRankScalable (identity from the first id), memory and registration calls, Revoke.
int ScalableBody(const ncclUniqueId* ids, int n, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  ncclUniqueId mine[2] = {ids[0], ids[1]};
  if (!check(ncclCommInitRankScalable(&comm, n, rank, 2, mine, &config) == ncclSuccess, "scalable init")) return 1;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  check(AllReduceSum(comm, stream, rank + 1, check) == 3, "allreduce on a scalable-init comm");
  void* mem = nullptr;
  void* handle = nullptr;
  check(ncclMemAlloc(&mem, 4096) == ncclSuccess && mem != nullptr, "MemAlloc");
  check(ncclCommRegister(comm, mem, 4096, &handle) == ncclSuccess && handle != nullptr, "Register");
  check(ncclCommDeregister(comm, handle) == ncclSuccess, "Deregister");
  check(ncclMemFree(mem) == ncclSuccess, "MemFree");
  check(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT) == ncclSuccess, "revoke");
  int in = 1, out = 0;
  check(ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, stream) == ncclInvalidUsage,
        "a revoked comm refuses new work");
  check(ncclCommDestroy(comm) == ncclSuccess, "destroy after revoke");
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

}  // namespace

TEST_CASE("InitRankScalable, memory/registration calls and Revoke", "[sim_nccl][api]") {
  const ncclUniqueId ids[2] = {simtest::NewUniqueId(), simtest::NewUniqueId()};
  auto result = simtest::RunRanks(2, [&](int rank) { return ScalableBody(ids, 2, rank); });
  result.segment_left = simtest::RemoveSegment(ids[0]);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("split: child ranks, NOCOLOR, shrink, CuDevice", "[sim_nccl][split]") {
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(4, [&](int rank) { return SplitBody(id, 4, rank); });
  result.segment_left = simtest::RemoveSegment(id);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("NCCL_DEBUG=INFO prints init lines with NCCL's commId for init and split", "[sim_nccl][split]") {
  const ncclUniqueId id = simtest::NewUniqueId();
  char dir[] = "/tmp/simnccl_logXXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::vector<std::string> paths;
  for (int r = 0; r < 4; ++r) paths.push_back(std::string(dir) + "/rank" + std::to_string(r));
  setenv("NCCL_DEBUG", "INFO", 1);
  auto result = simtest::RunRanks(4, [&](int rank) { return SplitBody(id, 4, rank); }, 30000, paths);
  unsetenv("NCCL_DEBUG");
  result.segment_left = simtest::RemoveSegment(id);
  REQUIRE(result.all_ok());
  const uint64_t root = ncclsim::HashUniqueId(id.internal, sizeof id.internal);
  const std::regex init_re(
      R"(^\S+:\d+:\d+ \[\d+\] NCCL INFO ncclCommInitRank comm 0x[0-9a-f]+ rank \d nranks 4 cudaDev \d nvmlDev \d busId \S+ commId 0x([0-9a-f]+) - Init (?:START|COMPLETE)$)",
      std::regex::multiline);
  const std::regex split_re(R"(NCCL INFO ncclCommSplit comm .* splitCount (\d+) color (\d+) .*commId 0x([0-9a-f]+) - Init COMPLETE)");
  for (int r = 0; r < 4; ++r) {
    const std::string log = ReadFile(paths[r]);
    const auto ids = Matches(log, init_re);
    REQUIRE(ids.size() == 2);
    CHECK(ids[0] == Hex(root));
    std::vector<std::tuple<int, int, std::string>> splits;
    for (auto it = std::sregex_iterator(log.begin(), log.end(), split_re); it != std::sregex_iterator(); ++it)
      splits.emplace_back(std::stoi((*it)[1]), std::stoi((*it)[2]), (*it)[3]);
    // First split: splitCount 1, color = parity. Second: splitCount 2 (color 7), except rank 3.
    REQUIRE(splits.size() == (r == 3 ? 1u : 2u));
    CHECK(std::get<0>(splits[0]) == 1);
    CHECK(std::get<2>(splits[0]) == Hex(ncclsim::HashSplitChild(root, 1, r % 2)));
    if (r != 3) CHECK(std::get<2>(splits[1]) == Hex(ncclsim::HashSplitChild(root, 2, 7)));
    std::remove(paths[r].c_str());
  }
  rmdir(dir);
}

TEST_CASE("split hash depends on parent, split count and color", "[sim_nccl][split]") {
  const uint64_t parent = 0x1234;
  CHECK(ncclsim::HashSplitChild(parent, 1, 0) != ncclsim::HashSplitChild(parent, 2, 0));
  CHECK(ncclsim::HashSplitChild(parent, 1, 0) != ncclsim::HashSplitChild(parent, 1, 1));
  CHECK(ncclsim::HashSplitChild(parent, 1, 0) != ncclsim::HashSplitChild(parent + 1, 1, 0));
  CHECK(ncclsim::HashSplitChild(parent, 1, 0) == ncclsim::HashSplitChild(parent, 1, 0));
}

TEST_CASE("nonblocking init and collectives report ncclInProgress", "[sim_nccl][nonblocking]") {
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(2, [&](int rank) { return NonblockingBody(id, 2, rank); });
  result.segment_left = simtest::RemoveSegment(id);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("InitAll and init inside a group drive several devices from one process", "[sim_nccl][initall]") {
  auto result = simtest::RunRanks(1, [](int) { return InitAllBody(); });
  INFO(result.Describe());
  REQUIRE(result.all_ok());
  const ncclUniqueId id = simtest::NewUniqueId();
  result = simtest::RunRanks(1, [&](int) { return GroupInitBody(id); });
  result.segment_left = simtest::RemoveSegment(id);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("argument errors and queries", "[sim_nccl][api]") {
  int version = 0;
  CHECK(ncclGetVersion(&version) == ncclSuccess);
  CHECK(version >= 22809);  // the exact value: comm_232_test "GetVersion reports 2.32.3..."
  CHECK(ncclAllReduce(nullptr, nullptr, 1, ncclFloat32, ncclSum, nullptr, nullptr) == ncclInvalidArgument);
  CHECK(ncclCommDestroy(nullptr) == ncclSuccess);
  CHECK(ncclCommAbort(nullptr) == ncclSuccess);
  int count = 0;
  CHECK(ncclCommCount(nullptr, &count) == ncclInvalidArgument);
  CHECK(std::string(ncclGetLastError(nullptr)).find("NULL") != std::string::npos);
  CHECK(std::string(ncclGetErrorString(ncclInProgress)).find("in progress") != std::string::npos);
  CHECK(std::string(ncclGetErrorString(ncclRemoteError)).find("remote") != std::string::npos);
  ncclRedOp_t op;
  float scalar = 2;
  CHECK(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, nullptr) == ncclInvalidArgument);
  ncclUniqueId id = simtest::NewUniqueId();
  ncclComm_t comm = nullptr;
  CHECK(ncclCommInitRank(&comm, 2, id, 5) == ncclInvalidArgument);
  CHECK(comm == nullptr);
}

namespace {

// A collective issued while its stream is capturing belongs to the CUDA graph, as with real
// NCCL; it must not block the communicator's later, uncaptured collectives.
int CaptureBody(const ncclUniqueId& id, int n, int rank) {
  Checker check(rank);
  cudaSetDevice(rank);
  ncclComm_t comm = nullptr;
  if (!check(ncclCommInitRank(&comm, n, id, rank) == ncclSuccess, "init")) return 1;
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int value = rank + 1, captured_out = -1;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "begin capture");
  check(ncclAllReduce(&value, &captured_out, 1, ncclInt32, ncclSum, comm, stream) == ncclSuccess,
        "allreduce while capturing");
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(stream, &graph) == cudaSuccess, "end capture");
  check(captured_out == -1, "a captured collective does not run at capture time");
  check(AllReduceSum(comm, stream, rank + 1, check) == n * (n + 1) / 2, "the next collective completes");
  cudaGraphDestroy(graph);
  check(ncclCommDestroy(comm) == ncclSuccess, "destroy");
  return check.failures();
}

}  // namespace

TEST_CASE("a collective captured into a graph does not block later collectives", "[sim_nccl][capture]") {
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(2, [&](int rank) { return CaptureBody(id, 2, rank); }, 20000);
  result.segment_left = simtest::RemoveSegment(id);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}
