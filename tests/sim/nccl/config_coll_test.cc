// The nccl*Config collectives of NCCL 2.31 behave like the plain ones; bad configs are refused.
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <vector>

#include "multiprocess.h"
#include "nccl_api_232.h"

using simtest::Checker;
using namespace ncclsim::v232;

namespace {

ncclCollConfig_t ValidConfig() {
  ncclCollConfig_t c{};
  c.size = sizeof c;
  c.magic = kApiMagic;
  c.version = kVersionCode;
  c.forceAlgSelection = 1;
  return c;
}

int ConfigBody(const ncclUniqueId& id, int n, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  if (!check(ncclCommInitRank(&comm, n, id, rank) == ncclSuccess, "init")) return 1;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  const ncclCollConfig_t config = ValidConfig();
  int in = rank + 1, sum = -1, bcast = -1;
  std::vector<int> gathered(n, -1), all(n, -1);
  check(ncclAllReduceConfig(&in, &sum, 1, ncclInt32, ncclSum, comm, stream, &config) == ncclSuccess, "allreduce");
  check(ncclBroadcastConfig(&in, &bcast, 1, ncclInt32, n - 1, comm, stream, nullptr) == ncclSuccess, "bcast, NULL");
  check(ncclAllGatherConfig(&in, all.data(), 1, ncclInt32, comm, stream, &config) == ncclSuccess, "allgather");
  check(ncclGatherConfig(&in, gathered.data(), 1, ncclInt32, 0, comm, stream, &config) == ncclSuccess, "gather");
  check(cudaStreamSynchronize(stream) == cudaSuccess, "sync");
  check(sum == n * (n + 1) / 2, "AllReduceConfig sums");
  check(bcast == n, "BroadcastConfig copies the root's value");
  for (int r = 0; r < n; ++r) {
    check(all[r] == r + 1, "AllGatherConfig");
    if (rank == 0) check(gathered[r] == r + 1, "GatherConfig at the root");
  }
  ncclCollConfig_t bad = ValidConfig();
  bad.magic = 0;
  check(ncclAllReduceConfig(&in, &sum, 1, ncclInt32, ncclSum, comm, stream, &bad) == ncclInvalidArgument, "magic");
  bad = ValidConfig();
  bad.version = 22809;
  check(ncclReduceConfig(&in, &sum, 1, ncclInt32, ncclSum, 0, comm, stream, &bad) == ncclInvalidArgument, "version");
  bad = ValidConfig();
  bad.size = 8;
  check(ncclAlltoAllConfig(&in, &sum, 1, ncclInt32, comm, stream, &bad) == ncclInvalidArgument, "size");
  check(std::string(ncclGetLastError(comm)).find("ncclCollConfig_t") != std::string::npos, "message names it");
  check(ncclReduceScatterConfig(&in, &sum, 1, ncclInt32, ncclSum, nullptr, stream, &config) == ncclInvalidArgument,
        "NULL comm still refused");
  // A refused call enqueued nothing: the next collective still pairs up with the peer's.
  int again = -1;
  check(ncclAllReduceConfig(&in, &again, 1, ncclInt32, ncclMax, comm, stream, &config) == ncclSuccess, "again");
  check(cudaStreamSynchronize(stream) == cudaSuccess && again == n, "after refusals");
  ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

}  // namespace

TEST_CASE("nccl*Config collectives behave like the plain ones and validate the config", "[sim_nccl][config]") {
  for (int n : {1, 3}) {
    const ncclUniqueId id = simtest::NewUniqueId();
    auto result = simtest::RunRanks(n, [&](int rank) { return ConfigBody(id, n, rank); }, 30000);
    result.segment_left = simtest::RemoveSegment(id);
    INFO(result.Describe());
    REQUIRE(result.all_ok());
  }
}
