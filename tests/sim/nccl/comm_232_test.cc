// Communicator calls new since 2.28.9: suspend/resume, memory statistics, growing by new
// ranks, runtime parameters and encryption; and PreMulSum reduction operators.
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "multiprocess.h"
#include "nccl_api_232.h"

using simtest::AllReduceSum;
using simtest::Checker;
using namespace ncclsim::v232;

namespace {

uint64_t Stat(ncclComm_t comm, ncclCommMemStat_t stat) {
  uint64_t v = ~0ull;
  return ncclCommMemStats(comm, stat, &v) == ncclSuccess ? v : ~0ull;
}

int SuspendBody(const ncclUniqueId& id) {
  Checker check(0);
  ncclComm_t comm = nullptr;
  if (!check(ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess, "init")) return 1;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  const uint64_t suspendable = Stat(comm, ncclStatGpuMemSuspend), persistent = Stat(comm, ncclStatGpuMemPersist);
  check(suspendable > 0 && persistent > 0, "the comm holds memory");
  check(Stat(comm, ncclStatGpuMemTotal) == suspendable + persistent, "total = suspendable + persistent");
  check(Stat(comm, ncclStatGpuMemSuspended) == 0, "not suspended");
  check(ncclCommSuspend(comm, 0x10) == ncclInvalidArgument, "unknown flag");
  check(ncclCommResume(comm) == ncclInvalidUsage, "resume of an active comm");
  check(ncclCommSuspend(comm, kSuspendMem) == ncclSuccess, "suspend");
  check(Stat(comm, ncclStatGpuMemSuspended) == 1 && Stat(comm, ncclStatGpuMemSuspend) == 0, "memory released");
  check(Stat(comm, ncclStatGpuMemTotal) == persistent, "only the persistent part is left");
  int in = 4, out = 0;
  check(ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, stream) == ncclInvalidUsage, "suspended refuses work");
  check(std::string(ncclGetLastError(comm)).find("suspended") != std::string::npos, "and says why");
  check(ncclCommSuspend(comm, 0) == ncclInvalidUsage, "already suspended");
  check(ncclCommResume(comm) == ncclSuccess, "resume");
  check(Stat(comm, ncclStatGpuMemSuspend) == suspendable, "memory back");
  check(AllReduceSum(comm, stream, 4, check) == 4, "works again");
  uint64_t v = 0;
  check(ncclCommMemStats(comm, static_cast<ncclCommMemStat_t>(9), &v) == ncclInvalidArgument, "bad stat");
  ncclUniqueId grow_id;
  check(ncclCommGetUniqueId(comm, &grow_id) == ncclSuccess, "GetUniqueId");
  check(ncclCommGetUniqueId(comm, &grow_id) == ncclInvalidUsage, "a second id before the first is consumed");
  ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

// The id rank 0 made, handed to the new rank through memory shared across fork.
struct GrowMailbox {
  std::atomic<int> ready;
  ncclUniqueId id;
};

// Ranks 0 and 1 form a comm and grow it by rank 2; the grown comm sums over all three.
int GrowBody(const ncclUniqueId& id, GrowMailbox* box, int rank) {
  Checker check(rank);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  ncclComm_t comm = nullptr, grown = nullptr;
  if (rank < 2) {
    if (!check(ncclCommInitRank(&comm, 2, id, rank) == ncclSuccess, "init")) return 1;
    ncclUniqueId grow_id;
    if (rank == 0) {
      check(ncclCommGetUniqueId(comm, &grow_id) == ncclSuccess, "GetUniqueId");
      box->id = grow_id;
      box->ready.store(1);
    }
    check(ncclCommGrow(comm, 3, rank == 0 ? &grow_id : nullptr, -1, &grown, nullptr) == ncclSuccess, "grow");
  } else {
    while (box->ready.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ncclUniqueId grow_id = box->id;
    check(ncclCommGrow(nullptr, 3, &grow_id, 2, &grown, nullptr) == ncclSuccess, "new rank joins");
  }
  int count = 0, me = -1;
  check(grown != nullptr && ncclCommCount(grown, &count) == ncclSuccess && count == 3, "grown size");
  check(ncclCommUserRank(grown, &me) == ncclSuccess && me == rank, "existing ranks keep their numbers");
  check(AllReduceSum(grown, stream, rank + 1, check) == 6, "allreduce over the grown comm");
  if (comm != nullptr) {
    check(AllReduceSum(comm, stream, 1, check) == 2, "the old comm still works");
    ncclCommDestroy(comm);
  }
  ncclCommDestroy(grown);
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

// Every rank multiplies by its own scalar, host (read at creation) or device (read when run).
int PreMulSumBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  if (!check(ncclCommInitRank(&comm, 2, id, rank) == ncclSuccess, "init")) return 1;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  float host_scalar = rank == 0 ? 2.0f : 3.0f;
  ncclRedOp_t host_op, device_op;
  check(ncclRedOpCreatePreMulSum(&host_op, &host_scalar, ncclFloat32, ncclScalarHostImmediate, comm) == ncclSuccess,
        "create (host)");
  host_scalar = 100.0f;  // read at creation: must not matter
  double* device_scalar = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&device_scalar), sizeof(double));
  *device_scalar = 1.0;
  check(ncclRedOpCreatePreMulSum(&device_op, device_scalar, ncclFloat64, ncclScalarDevice, comm) == ncclSuccess,
        "create (device)");
  check(host_op >= ncclNumOps && device_op != host_op, "new op values");
  *device_scalar = rank == 0 ? 0.5 : 4.0;  // read when the collective runs
  float in[3] = {1, 2, 3}, out[3] = {};
  double din = rank + 1, dout = 0;
  check(ncclAllReduce(in, out, 3, ncclFloat32, host_op, comm, stream) == ncclSuccess, "allreduce premulsum");
  check(ncclAllReduce(&din, &dout, 1, ncclFloat64, device_op, comm, stream) == ncclSuccess, "device scalar");
  check(ncclAllReduce(in, out, 3, ncclFloat64, host_op, comm, stream) == ncclInvalidArgument, "datatype mismatch");
  check(cudaStreamSynchronize(stream) == cudaSuccess, "sync");
  for (int i = 0; i < 3; ++i) check(out[i] == in[i] * 2 + in[i] * 3, "sum of x*scalar");
  check(dout == 1 * 0.5 + 2 * 4.0, "device scalar read at run time");
  check(ncclRedOpDestroy(host_op, comm) == ncclSuccess, "destroy");
  check(ncclRedOpDestroy(host_op, comm) == ncclInvalidArgument, "destroyed twice");
  check(ncclAllReduce(in, out, 3, ncclFloat32, host_op, comm, stream) == ncclInvalidArgument, "destroyed op refused");
  check(ncclRedOpDestroy(ncclSum, comm) == ncclInvalidArgument, "built-ins cannot be destroyed");
  ncclRedOpDestroy(device_op, comm);
  cudaFree(device_scalar);
  ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

}  // namespace

TEST_CASE("suspend refuses work until resume; memory statistics follow", "[sim_nccl][suspend]") {
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(1, [&](int) { return SuspendBody(id); }, 20000);
  result.segment_left = simtest::RemoveSegment(id);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("ncclCommGrow adds a rank with the id of ncclCommGetUniqueId", "[sim_nccl][grow]") {
  void* shared = mmap(nullptr, sizeof(GrowMailbox), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(shared != MAP_FAILED);
  auto* box = new (shared) GrowMailbox{};
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(3, [&](int rank) { return GrowBody(id, box, rank); }, 30000);
  result.segment_left = simtest::RemoveSegment(id);
  munmap(shared, sizeof(GrowMailbox));
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("PreMulSum ops: host and device scalars, sum of x*scalar, destroy", "[sim_nccl][premulsum]") {
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(2, [&](int rank) { return PreMulSumBody(id, rank); }, 30000);
  result.segment_left = simtest::RemoveSegment(id);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("runtime parameters and encryption requests", "[sim_nccl][params]") {
  ncclParamHandle_t h = nullptr;
  REQUIRE(ncclParamBind(&h, "NCCLSIM_NOOP") == ncclSuccess);
  int32_t i32 = -1;
  CHECK(ncclParamGetI32(h, &i32) == ncclSuccess);
  CHECK(i32 == 0);
  const char* text = nullptr;
  CHECK(ncclParamGetStr(h, &text) == ncclSuccess);
  CHECK(std::string(text) == "0");
  char raw[4];
  int len = 0;
  CHECK(ncclParamGet(h, raw, sizeof raw, &len) == ncclSuccess);
  CHECK(len == 2);
  ncclParamHandle_t version = nullptr;
  REQUIRE(ncclParamBind(&version, "NCCLSIM_VERSION") == ncclSuccess);
  CHECK(ncclParamGetI32(version, &i32) == ncclInvalidArgument);  // "2.32.3" is no integer
  CHECK(ncclParamBind(&h, "NCCL_NO_SUCH_PARAMETER") == ncclInvalidArgument);
  const char** keys = nullptr;
  int nkeys = 0;
  CHECK(ncclParamGetAllParameterKeys(&keys, &nkeys) == ncclSuccess);
  CHECK(nkeys >= 2);
  int value_len = 0;
  CHECK(ncclParamGetParameter("NCCLSIM_NOOP", &text, &value_len) == ncclSuccess);
  CHECK(value_len == 1);
  ncclEncryptionConfig_t enc{sizeof(ncclEncryptionConfig_t), kApiMagic, kVersionCode, NCCL_ENCRYPTION_MODE_PSK,
                             "secret"};
  CHECK(ncclSetEncryption(&enc) == ncclSuccess);
  enc.psk = nullptr;
  CHECK(ncclSetEncryption(&enc) == ncclInvalidArgument);
  enc.magic = 0;
  enc.mode = NCCL_ENCRYPTION_MODE_NONE;
  CHECK(ncclSetEncryption(&enc) == ncclInvalidArgument);
}

TEST_CASE("GetVersion reports 2.32.3 unless NCCLSIM_VERSION says otherwise", "[sim_nccl][version]") {
  int version = 0;
  REQUIRE(ncclGetVersion(&version) == ncclSuccess);
  const char* env = std::getenv("NCCLSIM_VERSION");
  CHECK(version == (env != nullptr && std::string(env) == "2.28.9" ? 22809 : 23203));
  CHECK(std::string(ncclGetErrorString(ncclTimeout)).find("timed out") != std::string::npos);
}
