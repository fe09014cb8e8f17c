#include <catch2/catch.hpp>

#include <thread>

#include "test_support.h"

using ncclsim_test::Gate;
using ncclsim_test::SetFlag;

TEST_CASE("legacy stream work waits for blocking streams", "[legacy]") {
  cudaStream_t blocking;
  REQUIRE(cudaStreamCreate(&blocking) == cudaSuccess);
  Gate gate;
  std::atomic<bool> legacy_ran{false};
  REQUIRE(cudaLaunchHostFunc(blocking, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(nullptr, SetFlag, &legacy_ran) == cudaSuccess);
  CHECK(cudaStreamQuery(nullptr) == cudaErrorNotReady);
  CHECK(cudaStreamQuery(cudaStreamLegacy) == cudaErrorNotReady);
  CHECK_FALSE(legacy_ran.load());
  gate.Open();
  REQUIRE(cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess);
  CHECK(legacy_ran.load());
  cudaGetLastError();
  cudaStreamDestroy(blocking);
}

TEST_CASE("non-blocking streams are exempt from legacy synchronisation", "[legacy]") {
  cudaStream_t nonblocking;
  REQUIRE(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking) == cudaSuccess);
  Gate gate;
  std::atomic<bool> legacy_ran{false};
  REQUIRE(cudaLaunchHostFunc(nonblocking, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(nullptr, SetFlag, &legacy_ran) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
  CHECK(legacy_ran.load());
  CHECK(cudaStreamQuery(nonblocking) == cudaErrorNotReady);
  gate.Open();
  REQUIRE(cudaStreamSynchronize(nonblocking) == cudaSuccess);
  cudaGetLastError();
  cudaStreamDestroy(nonblocking);
}

TEST_CASE("blocking streams wait for earlier legacy work", "[legacy]") {
  cudaStream_t blocking, nonblocking;
  REQUIRE(cudaStreamCreate(&blocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking) == cudaSuccess);
  Gate gate;
  std::atomic<bool> blocking_ran{false}, nonblocking_ran{false};
  REQUIRE(cudaLaunchHostFunc(nullptr, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(blocking, SetFlag, &blocking_ran) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(nonblocking, SetFlag, &nonblocking_ran) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(nonblocking) == cudaSuccess);
  CHECK(nonblocking_ran.load());
  CHECK(cudaStreamQuery(blocking) == cudaErrorNotReady);
  CHECK_FALSE(blocking_ran.load());
  gate.Open();
  REQUIRE(cudaStreamSynchronize(blocking) == cudaSuccess);
  CHECK(blocking_ran.load());
  cudaGetLastError();
  cudaStreamDestroy(blocking);
  cudaStreamDestroy(nonblocking);
}

TEST_CASE("legacy ordering is per device", "[legacy]") {
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  cudaStream_t other_device;
  REQUIRE(cudaStreamCreate(&other_device) == cudaSuccess);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  Gate gate;
  REQUIRE(cudaLaunchHostFunc(other_device, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);  // device 0's legacy stream
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  CHECK(cudaStreamQuery(nullptr) == cudaSuccess);  // nothing enqueued on device 1's legacy stream
  gate.Open();
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(cudaStreamQuery(other_device) == cudaSuccess);
  cudaStreamDestroy(other_device);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("cudaDeviceSynchronize waits for every stream of the device", "[legacy]") {
  cudaStream_t nonblocking;
  REQUIRE(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking) == cudaSuccess);
  Gate gate;
  std::atomic<bool> after{false};
  REQUIRE(cudaLaunchHostFunc(nonblocking, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(nonblocking, SetFlag, &after) == cudaSuccess);
  std::thread opener([&] { gate.Open(); });
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(after.load());
  opener.join();
  cudaStreamDestroy(nonblocking);
}

TEST_CASE("per-thread default streams are independent of each other", "[ptds]") {
  Gate gate, queued;
  cudaError_t launch = cudaErrorUnknown, query = cudaSuccess, query_ptsz = cudaSuccess, sync = cudaErrorUnknown;
  // Catch assertions are not thread-safe: the other thread only records results.
  std::thread blocker([&] {
    launch = cudaLaunchHostFunc(cudaStreamPerThread, Gate::BlockOn, &gate);
    query = cudaStreamQuery(cudaStreamPerThread);
    query_ptsz = cudaStreamQuery_ptsz(nullptr);
    cudaGetLastError();
    queued.Open();
    sync = cudaStreamSynchronize_ptsz(nullptr);
  });
  queued.Wait();
  // This thread's per-thread stream is a different one and is idle.
  std::atomic<bool> mine{false};
  CHECK(cudaLaunchHostFunc_ptsz(nullptr, SetFlag, &mine) == cudaSuccess);
  CHECK(cudaStreamSynchronize(cudaStreamPerThread) == cudaSuccess);
  CHECK(mine.load());
  gate.Open();
  blocker.join();
  CHECK(launch == cudaSuccess);
  CHECK(query == cudaErrorNotReady);
  CHECK(query_ptsz == cudaErrorNotReady);
  CHECK(sync == cudaSuccess);
}

TEST_CASE("the per-thread default stream is ordered with the legacy stream", "[ptds][legacy]") {
  Gate gate;
  std::atomic<bool> ran{false};
  REQUIRE(cudaLaunchHostFunc(cudaStreamPerThread, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(cudaStreamLegacy, SetFlag, &ran) == cudaSuccess);
  CHECK(cudaStreamQuery(cudaStreamLegacy) == cudaErrorNotReady);
  CHECK_FALSE(ran.load());
  gate.Open();
  REQUIRE(cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess);
  CHECK(ran.load());
  cudaGetLastError();
}

TEST_CASE("concurrent submission to the legacy and a blocking stream does not deadlock", "[legacy]") {
  // Each submission checks the other stream's progress; doing so under its own stream's lock
  // would deadlock two threads submitting to the legacy stream and a blocking stream at once.
  cudaStream_t blocking;
  REQUIRE(cudaStreamCreate(&blocking) == cudaSuccess);
  static char legacy_buffer[64], blocking_buffer[64];
  constexpr int kRounds = 200000;
  cudaError_t other_result = cudaSuccess;
  std::thread other([&] {
    for (int i = 0; i < kRounds && other_result == cudaSuccess; ++i) {
      other_result = cudaMemsetAsync(blocking_buffer, i, sizeof(blocking_buffer), blocking);
    }
  });
  cudaError_t result = cudaSuccess;
  for (int i = 0; i < kRounds && result == cudaSuccess; ++i) {
    result = cudaMemsetAsync(legacy_buffer, i, sizeof(legacy_buffer), nullptr);
  }
  other.join();
  CHECK(result == cudaSuccess);
  CHECK(other_result == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cudaStreamDestroy(blocking);
}
