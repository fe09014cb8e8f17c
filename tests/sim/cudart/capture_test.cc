#include <catch2/catch.hpp>

#include <thread>

#include "test_support.h"

using ncclsim_test::SetFlag;

TEST_CASE("captured work is not executed", "[capture]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  REQUIRE(cudaStreamIsCapturing(s, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusActive);
  unsigned long long id = 0;
  REQUIRE(cudaStreamGetCaptureInfo(s, &status, &id) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusActive);
  CHECK(id != 0);

  std::atomic<bool> ran{false};
  char buffer[8] = {};
  cudaEvent_t event;
  REQUIRE(cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(s, SetFlag, &ran) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(buffer, 7, sizeof(buffer), s) == cudaSuccess);
  REQUIRE(cudaEventRecord(event, s) == cudaSuccess);
  CHECK(cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported);
  cudaGetLastError();

  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  REQUIRE(graph != nullptr);
  REQUIRE(cudaStreamIsCapturing(s, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusNone);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK_FALSE(ran.load());
  CHECK(buffer[0] == 0);

  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK_FALSE(ran.load());  // launches replay nothing (see sim/cudart/README.md)
  CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(cudaStreamEndCapture(s, &graph) == cudaErrorIllegalState);
  cudaGetLastError();
  cudaEventDestroy(event);
  cudaStreamDestroy(s);
}

TEST_CASE("a global capture makes the legacy stream off limits", "[capture]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaStreamCaptureStatus status;
  CHECK(cudaStreamIsCapturing(nullptr, &status) == cudaErrorStreamCaptureImplicit);
  CHECK(cudaGetLastError() == cudaErrorStreamCaptureImplicit);

  cudaError_t global_thread = cudaSuccess, thread_local_thread = cudaErrorUnknown;
  cudaStreamCaptureStatus thread_local_status = cudaStreamCaptureStatusActive;
  std::thread other([&] {
    global_thread = cudaStreamIsCapturing(nullptr, &status);
    cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal;
    cudaThreadExchangeStreamCaptureMode(&mode);
    thread_local_thread = cudaStreamIsCapturing(nullptr, &thread_local_status);
    cudaGetLastError();
  });
  other.join();
  CHECK(global_thread == cudaErrorStreamCaptureImplicit);
  CHECK(thread_local_thread == cudaSuccess);
  CHECK(thread_local_status == cudaStreamCaptureStatusNone);

  cudaGraph_t graph;
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  CHECK(cudaStreamIsCapturing(nullptr, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusNone);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

TEST_CASE("thread capture mode exchange returns the previous mode", "[capture]") {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  REQUIRE(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeGlobal);
  REQUIRE(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeRelaxed);
}

TEST_CASE("the legacy stream cannot be captured", "[capture]") {
  CHECK(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
  cudaGetLastError();
}
