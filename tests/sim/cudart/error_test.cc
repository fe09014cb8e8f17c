#include <catch2/catch.hpp>

#include <cstring>
#include <thread>

#include "test_support.h"

TEST_CASE("the last error is recorded, peeked and cleared per thread", "[error]") {
  cudaGetLastError();
  REQUIRE(cudaPeekAtLastError() == cudaSuccess);
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  REQUIRE(cudaSetDevice(count) == cudaErrorInvalidDevice);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);

  cudaError_t other_thread_sees = cudaErrorUnknown;
  std::thread other([&] { other_thread_sees = cudaPeekAtLastError(); });
  other.join();
  CHECK(other_thread_sees == cudaSuccess);

  // A later success does not clear it.
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("cudaErrorNotReady from a query becomes the last error", "[error]") {
  cudaGetLastError();
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  ncclsim_test::Gate gate;
  REQUIRE(cudaLaunchHostFunc(s, ncclsim_test::Gate::BlockOn, &gate) == cudaSuccess);
  cudaEvent_t event;
  REQUIRE(cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(cudaEventRecord(event, s) == cudaSuccess);
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  REQUIRE(cudaEventQuery(event) == cudaErrorNotReady);
  CHECK(cudaPeekAtLastError() == cudaErrorNotReady);
  CHECK(cudaGetLastError() == cudaErrorNotReady);
  CHECK(cudaGetLastError() == cudaSuccess);
  gate.Open();
  REQUIRE(cudaEventSynchronize(event) == cudaSuccess);
  CHECK(cudaEventQuery(event) == cudaSuccess);
  CHECK(cudaGetLastError() == cudaSuccess);
  cudaEventDestroy(event);
  cudaStreamDestroy(s);
}

TEST_CASE("error names and strings", "[error]") {
  CHECK(std::strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess") == 0);
  CHECK(std::strcmp(cudaGetErrorName(cudaErrorNotReady), "cudaErrorNotReady") == 0);
  CHECK(std::strcmp(cudaGetErrorName(cudaErrorStreamCaptureImplicit), "cudaErrorStreamCaptureImplicit") == 0);
  CHECK(std::strcmp(cudaGetErrorString(cudaErrorInvalidDevice), "invalid device ordinal") == 0);
  const char* unknown = cudaGetErrorString(static_cast<cudaError_t>(12345));
  REQUIRE(unknown != nullptr);
  CHECK(std::strlen(unknown) > 0);
}
