#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "test_support.h"

TEST_CASE("device memory round trip", "[memory]") {
  REQUIRE(cudaFree(nullptr) == cudaSuccess);
  void* device = nullptr;
  REQUIRE(cudaMalloc(&device, 64) == cudaSuccess);
  REQUIRE(device != nullptr);
  REQUIRE(cudaMemset(device, 0x5a, 64) == cudaSuccess);
  unsigned char host[64] = {};
  REQUIRE(cudaMemcpy(host, device, 64, cudaMemcpyDeviceToHost) == cudaSuccess);
  for (unsigned char c : host) CHECK(c == 0x5a);

  void* pinned = nullptr;
  REQUIRE(cudaMallocHost(&pinned, 64) == cudaSuccess);
  std::memset(pinned, 3, 64);
  REQUIRE(cudaMemcpyAsync(device, pinned, 64, cudaMemcpyHostToDevice, nullptr) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(static_cast<char*>(device) + 32, 9, 32, cudaStreamPerThread) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemcpy(host, device, 64, cudaMemcpyDefault) == cudaSuccess);
  CHECK(host[0] == 3);
  CHECK(host[63] == 9);

  cudaPointerAttributes attributes;
  REQUIRE(cudaPointerGetAttributes(&attributes, static_cast<char*>(device) + 10) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeDevice);
  CHECK(attributes.device == 0);
  REQUIRE(cudaPointerGetAttributes(&attributes, pinned) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeHost);
  REQUIRE(cudaPointerGetAttributes(&attributes, host) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeUnregistered);

  CHECK(cudaFree(pinned) == cudaErrorInvalidValue);  // pinned memory goes through cudaFreeHost
  CHECK(cudaFree(host) == cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(cudaFreeHost(pinned) == cudaSuccess);
  CHECK(cudaFree(device) == cudaSuccess);
}

TEST_CASE("managed memory and allocations on other devices", "[memory]") {
  REQUIRE(cudaSetDevice(3) == cudaSuccess);
  void* managed = nullptr;
  REQUIRE(cudaMallocManaged(&managed, 16, cudaMemAttachGlobal) == cudaSuccess);
  cudaPointerAttributes attributes;
  REQUIRE(cudaPointerGetAttributes(&attributes, managed) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeManaged);
  CHECK(attributes.device == 3);
  CHECK(cudaFree(managed) == cudaSuccess);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("device count follows NCCLSIM_DEVICES", "[device][device_count]") {
  const char* env = std::getenv("NCCLSIM_DEVICES");
  const int expected = env && *env ? std::atoi(env) : 8;  // the sim's default
  int count = -1;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  CHECK(count == expected);
  CHECK(cudaSetDevice(expected - 1) == cudaSuccess);
  CHECK(cudaSetDevice(expected) == cudaErrorInvalidDevice);
  CHECK(cudaSetDevice(-1) == cudaErrorInvalidDevice);
  cudaGetLastError();
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("the current device is per thread", "[device]") {
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  int other_thread_device = -1;
  std::thread other([&] { cudaGetDevice(&other_thread_device); });
  other.join();
  CHECK(other_thread_device == 0);
  int device = -1;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  CHECK(device == 1);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("device properties, attributes and versions", "[device]") {
  cudaDeviceProp prop;
  REQUIRE(cudaGetDeviceProperties(&prop, 2) == cudaSuccess);
  CHECK(std::string(prop.name) == "ncclsim CPU device 2");
  CHECK(prop.pciBusID == 2);
  CHECK(prop.totalGlobalMem > 0);
  CHECK(prop.warpSize == 32);
  int value = -1;
  REQUIRE(cudaDeviceGetAttribute(&value, cudaDevAttrPciBusId, 5) == cudaSuccess);
  CHECK(value == 5);
  REQUIRE(cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess);
  CHECK(value == prop.major);
  int version = 0;
  REQUIRE(cudaRuntimeGetVersion(&version) == cudaSuccess);
  CHECK(version == 13000);
  REQUIRE(cudaDriverGetVersion(&version) == cudaSuccess);
  CHECK(version == 13000);
  CHECK(cudaGetDeviceProperties(&prop, 100000) == cudaErrorInvalidDevice);
  cudaGetLastError();
}
