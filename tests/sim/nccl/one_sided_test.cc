// ncclPutSignal / ncclSignal / ncclWaitSignal over windows from ncclCommWindowRegister,
// between processes; and the device-pointer queries that need hardware the sim lacks.
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "multiprocess.h"
#include "nccl_api_232.h"

using simtest::Checker;
using namespace ncclsim::v232;
using namespace std::chrono_literals;

namespace {

constexpr size_t kWords = 100000;  // 400 KB: more than one process_vm_writev page run

// Rank 0 puts into rank 1's window and signals; rank 1's WaitSignal holds its stream until then.
int PutBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  ncclComm_t comm = nullptr;
  if (!check(ncclCommInitRank(&comm, 2, id, rank) == ncclSuccess, "init")) return 1;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  std::vector<int> window(kWords + 8, -1);
  ncclWindow_t win = nullptr;
  check(ncclCommWindowRegister(comm, window.data(), window.size() * sizeof(int), &win, 0) == ncclSuccess, "register");
  void* user = nullptr;
  check(ncclWinGetUserPtr(comm, win, &user) == ncclSuccess && user == window.data(), "WinGetUserPtr");
  if (rank == 0) {
    std::vector<int> data(kWords);
    for (size_t i = 0; i < kWords; ++i) data[i] = static_cast<int>(i * 7);
    std::this_thread::sleep_for(400ms);  // the peer's WaitSignal is already blocking
    check(ncclPutSignal(data.data(), kWords, ncclInt32, 1, win, 8 * sizeof(int), 5, 1, 0, comm, stream) ==
              ncclSuccess, "PutSignal");
    check(ncclSignal(1, 6, 0, 0, comm, stream) == ncclSuccess, "Signal");
    check(ncclSignal(1, 6, 0, 0, comm, stream) == ncclSuccess, "Signal again");
    check(cudaStreamSynchronize(stream) == cudaSuccess, "sync");
  } else {
    ncclWaitSignalDesc_t waits[2] = {{1, 0, 5, 1}, {2, 0, 6, 0}};
    const auto start = std::chrono::steady_clock::now();
    check(ncclWaitSignal(2, waits, comm, stream) == ncclSuccess, "WaitSignal");
    check(cudaStreamSynchronize(stream) == cudaSuccess, "sync");
    check(std::chrono::steady_clock::now() - start >= 300ms, "WaitSignal held the stream until the signals came");
    bool same = window[7] == -1;
    for (size_t i = 0; i < kWords; ++i) same &= window[8 + i] == static_cast<int>(i * 7);
    check(same, "the put data is in the window at the offset, and nothing before it");
  }
  int in = 1, out = 0;  // both ranks are done with the windows before deregistering
  ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, stream);
  cudaStreamSynchronize(stream);
  check(ncclCommWindowDeregister(comm, win) == ncclSuccess, "deregister");
  ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  return check.failures() == 0 ? 0 : 1;
}

int RefusalBody(const ncclUniqueId& id) {
  Checker check(0);
  ncclComm_t comm = nullptr;
  if (!check(ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess, "init")) return 1;
  std::vector<char> buf(4096);
  ncclWindow_t win = nullptr;
  check(ncclCommWindowRegister(comm, buf.data(), buf.size(), &win, 0) == ncclSuccess, "register");
  int x = 0;
  check(ncclPutSignal(&x, 1, ncclInt32, 0, win, 4096, 0, 0, 0, comm, nullptr) == ncclInvalidArgument, "past the end");
  check(ncclPutSignal(&x, 1, ncclInt32, 0, win, 0, 64, 0, 0, comm, nullptr) == ncclInvalidArgument, "sigIdx");
  check(ncclSignal(0, 0, 4, 0, comm, nullptr) == ncclInvalidArgument, "ctx");
  check(ncclSignal(1, 0, 0, 0, comm, nullptr) == ncclInvalidArgument, "peer");
  check(ncclSignal(0, 0, 0, 1, comm, nullptr) == ncclInvalidArgument, "flags are reserved");
  void* ptr = &x;
  check(ncclGetLsaMultimemDevicePointer(win, 0, &ptr) == ncclInvalidUsage, "no multimem");
  check(std::string(ncclGetLastError(comm)).find("unavailable") != std::string::npos, "says why");
  check(ncclGetPeerDevicePointer(win, 0, 0, &ptr) == ncclInvalidUsage, "no peer device pointers");
  check(ncclGetPeerDevicePointer(nullptr, 0, 0, &ptr) == ncclInvalidArgument, "NULL window");
  ncclCommProperties_t props{};
  props.size = sizeof props;
  props.magic = kApiMagic;
  props.version = kVersionCode;
  check(ncclCommQueryProperties(comm, &props) == ncclSuccess, "QueryProperties");
  check(props.nRanks == 1 && props.rank == 0 && !props.deviceApiSupport && !props.multimemSupport &&
            props.hostRmaSupport && props.ginType == NCCL_GIN_TYPE_NONE, "properties of a GPU-less host");
  ncclCommProperties_t raw{};
  check(ncclCommQueryProperties(comm, &raw) == ncclInvalidArgument, "uninitialized props refused");
  check(ncclCommWindowDeregister(comm, win) == ncclSuccess, "deregister");
  ncclCommDestroy(comm);
  return check.failures() == 0 ? 0 : 1;
}

}  // namespace

TEST_CASE("PutSignal writes into the peer's window; WaitSignal blocks until signalled", "[sim_nccl][onesided]") {
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(2, [&](int rank) { return PutBody(id, rank); }, 30000);
  result.segment_left = simtest::RemoveSegment(id);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}

TEST_CASE("one-sided argument errors and device pointers refused without the hardware", "[sim_nccl][onesided]") {
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(1, [&](int) { return RefusalBody(id); }, 20000);
  result.segment_left = simtest::RemoveSegment(id);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
}
