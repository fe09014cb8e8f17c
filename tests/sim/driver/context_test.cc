#include <cuda.h>

#include <catch2/catch.hpp>

#include <thread>

TEST_CASE("a primary context is active while retained", "[context]") {
  unsigned flags = 99;
  int active = -1;
  REQUIRE(cuDevicePrimaryCtxGetState(2, &flags, &active) == CUDA_SUCCESS);
  CHECK(active == 0);
  CHECK(flags == 0);
  CUcontext a = nullptr, b = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&a, 2) == CUDA_SUCCESS);
  REQUIRE(cuDevicePrimaryCtxRetain(&b, 2) == CUDA_SUCCESS);
  CHECK(a != nullptr);
  CHECK(a == b);  // one primary context per device
  REQUIRE(cuDevicePrimaryCtxGetState(2, &flags, &active) == CUDA_SUCCESS);
  CHECK(active == 1);
  REQUIRE(cuDevicePrimaryCtxRelease(2) == CUDA_SUCCESS);
  REQUIRE(cuDevicePrimaryCtxGetState(2, &flags, &active) == CUDA_SUCCESS);
  CHECK(active == 1);  // still retained once
  REQUIRE(cuDevicePrimaryCtxRelease_v2(2) == CUDA_SUCCESS);
  REQUIRE(cuDevicePrimaryCtxGetState(2, &flags, &active) == CUDA_SUCCESS);
  CHECK(active == 0);
  CHECK(cuDevicePrimaryCtxRelease(2) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuDevicePrimaryCtxRetain(&a, 9) == CUDA_ERROR_INVALID_DEVICE);
}

TEST_CASE("primary context flags persist; reset deactivates", "[context]") {
  REQUIRE(cuDevicePrimaryCtxSetFlags(1, CU_CTX_SCHED_BLOCKING_SYNC) == CUDA_SUCCESS);
  CUcontext c = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&c, 1) == CUDA_SUCCESS);
  unsigned flags = 0;
  int active = 0;
  REQUIRE(cuDevicePrimaryCtxGetState(1, &flags, &active) == CUDA_SUCCESS);
  CHECK(flags == CU_CTX_SCHED_BLOCKING_SYNC);
  CHECK(active == 1);
  CHECK(cuDevicePrimaryCtxSetFlags(1, 0x80000000u) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuDevicePrimaryCtxReset(1) == CUDA_SUCCESS);
  REQUIRE(cuDevicePrimaryCtxGetState(1, &flags, &active) == CUDA_SUCCESS);
  CHECK(active == 0);
  CHECK(flags == 0);
}

TEST_CASE("the current context is per thread, with push and pop", "[context]") {
  CUcontext c0 = nullptr, c3 = nullptr, got = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&c0, 0) == CUDA_SUCCESS);
  REQUIRE(cuDevicePrimaryCtxRetain(&c3, 3) == CUDA_SUCCESS);
  REQUIRE(cuCtxGetCurrent(&got) == CUDA_SUCCESS);
  CHECK(got == nullptr);
  CUdevice dev = -1;
  CHECK(cuCtxGetDevice(&dev) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuCtxSynchronize() == CUDA_ERROR_INVALID_CONTEXT);

  REQUIRE(cuCtxSetCurrent(c0) == CUDA_SUCCESS);
  REQUIRE(cuCtxPushCurrent(c3) == CUDA_SUCCESS);
  REQUIRE(cuCtxGetDevice(&dev) == CUDA_SUCCESS);
  CHECK(dev == 3);
  CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
  std::thread([&] {
    CUcontext other = reinterpret_cast<CUcontext>(1);
    cuCtxGetCurrent(&other);
    CHECK(other == nullptr);
  }).join();
  CUcontext popped = nullptr;
  REQUIRE(cuCtxPopCurrent(&popped) == CUDA_SUCCESS);
  CHECK(popped == c3);
  REQUIRE(cuCtxGetCurrent(&got) == CUDA_SUCCESS);
  CHECK(got == c0);
  REQUIRE(cuCtxSetCurrent(nullptr) == CUDA_SUCCESS);
  REQUIRE(cuCtxGetCurrent(&got) == CUDA_SUCCESS);
  CHECK(got == nullptr);
  CHECK(cuCtxPopCurrent(&popped) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuCtxPushCurrent(reinterpret_cast<CUcontext>(&dev)) == CUDA_ERROR_INVALID_CONTEXT);
  cuDevicePrimaryCtxRelease(0);
  cuDevicePrimaryCtxRelease(3);
}
