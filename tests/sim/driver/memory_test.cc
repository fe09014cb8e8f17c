#include <cuda.h>
#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

#include "test_support.h"

using ncclsim_test::Gate;

TEST_CASE("cuMemAlloc memory is runtime memory, with copies and sets", "[memory]") {
  CUdeviceptr d = 0;
  REQUIRE(cuMemAlloc(&d, 1024) == CUDA_SUCCESS);
  cudaPointerAttributes attributes{};
  REQUIRE(cudaPointerGetAttributes(&attributes, reinterpret_cast<void*>(d)) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeDevice);

  REQUIRE(cuMemsetD32(d, 0xdeadbeef, 256) == CUDA_SUCCESS);
  uint32_t host[256];
  REQUIRE(cuMemcpyDtoH(host, d, sizeof(host)) == CUDA_SUCCESS);
  CHECK(host[0] == 0xdeadbeefu);
  CHECK(host[255] == 0xdeadbeefu);
  const char text[] = "driver";
  REQUIRE(cuMemcpyHtoD(d + 10, text, sizeof(text)) == CUDA_SUCCESS);
  CHECK(std::memcmp(reinterpret_cast<void*>(d + 10), text, sizeof(text)) == 0);

  CUdeviceptr base = 0;
  size_t size = 0;
  REQUIRE(cuMemGetAddressRange(&base, &size, d + 100) == CUDA_SUCCESS);
  CHECK(base == d);
  CHECK(size == 1024);
  unsigned type = 0;
  REQUIRE(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 5) == CUDA_SUCCESS);
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  int local = 0;
  CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(&local)) ==
        CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuMemFree(d) == CUDA_SUCCESS);
  CHECK(cuMemFree(d) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("async copies and sets wait their turn in the stream", "[memory]") {
  CUstream s;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  CUdeviceptr d = 0;
  REQUIRE(cuMemAlloc(&d, 64) == CUDA_SUCCESS);
  REQUIRE(cuMemsetD8(d, 0, 64) == CUDA_SUCCESS);
  Gate gate;
  REQUIRE(cudaLaunchHostFunc(s, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cuMemsetD8Async(d, 0x11, 32, s) == CUDA_SUCCESS);
  REQUIRE(cuMemcpyDtoDAsync(d + 32, d, 32, s) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<unsigned char*>(d)[0] == 0);
  gate.Open();
  REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<unsigned char*>(d)[63] == 0x11);
  cuMemFree(d);
  cuStreamDestroy(s);
}
