#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "test_support.h"

using ncclsim_test::Gate;

TEST_CASE("a never-recorded event is complete", "[event]") {
  cudaEvent_t event;
  REQUIRE(cudaEventCreate(&event) == cudaSuccess);
  CHECK(cudaEventQuery(event) == cudaSuccess);
  CHECK(cudaEventSynchronize(event) == cudaSuccess);
  CHECK(cudaEventDestroy(event) == cudaSuccess);
  CHECK(cudaEventQuery(event) == cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

TEST_CASE("event query, synchronize and elapsed time follow the stream", "[event]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  cudaEvent_t start, stop;
  REQUIRE(cudaEventCreate(&start) == cudaSuccess);
  REQUIRE(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync) == cudaSuccess);
  Gate gate;
  REQUIRE(cudaEventRecord(start, s) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(s, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaEventRecord(stop, s) == cudaSuccess);
  CHECK(cudaEventQuery(start) == cudaSuccess);
  CHECK(cudaEventQuery(stop) == cudaErrorNotReady);
  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaErrorNotReady);

  constexpr auto kHeld = std::chrono::milliseconds(20);
  std::thread opener([&] {
    std::this_thread::sleep_for(kHeld);
    gate.Open();
  });
  REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
  opener.join();
  CHECK(cudaEventQuery(stop) == cudaSuccess);
  REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
  CHECK(ms >= 20.0f);  // the stream was held at least that long between the two records
  cudaGetLastError();
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(s);
}

TEST_CASE("elapsed time needs timing on both events", "[event]") {
  cudaEvent_t timed, untimed;
  REQUIRE(cudaEventCreate(&timed) == cudaSuccess);
  REQUIRE(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(cudaEventRecord(timed, nullptr) == cudaSuccess);
  REQUIRE(cudaEventRecord(untimed, nullptr) == cudaSuccess);
  REQUIRE(cudaEventSynchronize(untimed) == cudaSuccess);
  float ms;
  CHECK(cudaEventElapsedTime(&ms, timed, untimed) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventElapsedTime(&ms, untimed, timed) == cudaErrorInvalidResourceHandle);
  CHECK(cudaEventElapsedTime(&ms, timed, timed) == cudaSuccess);
  CHECK(ms == 0.0f);
  cudaGetLastError();
  cudaEventDestroy(timed);
  cudaEventDestroy(untimed);
}

TEST_CASE("cudaStreamWaitEvent orders one stream behind another", "[event]") {
  cudaStream_t producer, consumer;
  REQUIRE(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking) == cudaSuccess);
  cudaEvent_t event;
  REQUIRE(cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess);
  Gate gate;
  std::atomic<bool> consumed{false};
  REQUIRE(cudaLaunchHostFunc(producer, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaEventRecord(event, producer) == cudaSuccess);
  REQUIRE(cudaStreamWaitEvent(consumer, event, 0) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(consumer, ncclsim_test::SetFlag, &consumed) == cudaSuccess);
  CHECK(cudaStreamQuery(consumer) == cudaErrorNotReady);
  CHECK_FALSE(consumed.load());
  gate.Open();
  REQUIRE(cudaStreamSynchronize(consumer) == cudaSuccess);
  CHECK(consumed.load());
  cudaGetLastError();
  cudaEventDestroy(event);
  cudaStreamDestroy(producer);
  cudaStreamDestroy(consumer);
}

TEST_CASE("re-recording an event moves it to the new point", "[event]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  cudaEvent_t event;
  REQUIRE(cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(cudaEventRecord(event, s) == cudaSuccess);
  CHECK(cudaEventQuery(event) == cudaSuccess);
  Gate gate;
  REQUIRE(cudaLaunchHostFunc(s, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaEventRecord(event, s) == cudaSuccess);
  CHECK(cudaEventQuery(event) == cudaErrorNotReady);
  gate.Open();
  REQUIRE(cudaEventSynchronize(event) == cudaSuccess);
  cudaGetLastError();
  cudaEventDestroy(event);
  cudaStreamDestroy(s);
}
