// Memory accounting, stream-ordered allocation, the default pool's attributes and host
// registration.
#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "test_support.h"

namespace {

size_t FreeBytes() {
  size_t free_bytes = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
  return free_bytes;
}

}  // namespace

TEST_CASE("cudaMemGetInfo: free memory drops by an allocation and comes back after free", "[memory][mempool]") {
  REQUIRE(cudaSetDevice(2) == cudaSuccess);
  size_t free_before = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_before, &total) == cudaSuccess);
  CHECK(total == size_t{80} << 30);
  CHECK(free_before <= total);
  constexpr size_t kBytes = 3 << 20;
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, kBytes) == cudaSuccess);
  CHECK(FreeBytes() <= free_before - kBytes);
  void* managed = nullptr;
  REQUIRE(cudaMallocManaged(&managed, kBytes, cudaMemAttachGlobal) == cudaSuccess);
  CHECK(FreeBytes() <= free_before - 2 * kBytes);
  REQUIRE(cudaFree(managed) == cudaSuccess);
  REQUIRE(cudaFree(p) == cudaSuccess);
  CHECK(FreeBytes() == free_before);
  // Another device's memory is its own.
  REQUIRE(cudaSetDevice(3) == cudaSuccess);
  const size_t free_other = FreeBytes();
  REQUIRE(cudaSetDevice(2) == cudaSuccess);
  REQUIRE(cudaMalloc(&p, kBytes) == cudaSuccess);
  REQUIRE(cudaSetDevice(3) == cudaSuccess);
  CHECK(FreeBytes() == free_other);
  REQUIRE(cudaSetDevice(2) == cudaSuccess);
  REQUIRE(cudaFree(p) == cudaSuccess);
  // More than the device holds fails, however much the host has.
  CHECK(cudaMalloc(&p, total + 1) == cudaErrorMemoryAllocation);
  CHECK(cudaMemGetInfo(nullptr, &total) == cudaErrorInvalidValue);
  cudaGetLastError();
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("cudaFreeAsync takes effect when the stream reaches it", "[memory][mempool]") {
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  cudaStream_t s;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  const size_t free_before = FreeBytes();
  void* p = nullptr;
  REQUIRE(cudaMallocAsync(&p, 1 << 20, s) == cudaSuccess);
  REQUIRE(p != nullptr);
  CHECK(FreeBytes() <= free_before - (1 << 20));
  cudaPointerAttributes attr;
  REQUIRE(cudaPointerGetAttributes(&attr, p) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeDevice);
  CHECK(attr.device == 1);

  ncclsim_test::Gate gate;
  REQUIRE(cudaLaunchHostFunc(s, ncclsim_test::Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaFreeAsync(p, s) == cudaSuccess);
  // Still allocated: the stream is held before the free.
  REQUIRE(cudaPointerGetAttributes(&attr, p) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeDevice);
  CHECK(FreeBytes() < free_before);
  gate.Open();
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  REQUIRE(cudaPointerGetAttributes(&attr, p) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeUnregistered);
  CHECK(FreeBytes() == free_before);

  int host = 0;
  CHECK(cudaFreeAsync(&host, s) == cudaErrorInvalidValue);
  CHECK(cudaFreeAsync(nullptr, s) == cudaSuccess);
  cudaGetLastError();
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("the default memory pool's attributes round-trip", "[memory][mempool]") {
  cudaMemPool_t pool = nullptr, other = nullptr;
  REQUIRE(cudaDeviceGetDefaultMemPool(&pool, 4) == cudaSuccess);
  REQUIRE(cudaDeviceGetDefaultMemPool(&other, 5) == cudaSuccess);
  CHECK(pool != other);
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 100000) == cudaErrorInvalidDevice);
  REQUIRE(cudaDeviceGetDefaultMemPool(&pool, 4) == cudaSuccess);

  uint64_t threshold = UINT64_MAX;
  REQUIRE(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) == cudaSuccess);
  uint64_t read = 0;
  REQUIRE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &read) == cudaSuccess);
  CHECK(read == UINT64_MAX);
  REQUIRE(cudaMemPoolGetAttribute(other, cudaMemPoolAttrReleaseThreshold, &read) == cudaSuccess);
  CHECK(read == 0);
  for (cudaMemPoolAttr a : {cudaMemPoolReuseFollowEventDependencies, cudaMemPoolReuseAllowOpportunistic,
                            cudaMemPoolReuseAllowInternalDependencies}) {
    int value = 0;
    REQUIRE(cudaMemPoolSetAttribute(pool, a, &value) == cudaSuccess);
    value = 7;
    REQUIRE(cudaMemPoolGetAttribute(pool, a, &value) == cudaSuccess);
    CHECK(value == 0);
  }

  // Used memory follows cudaMallocAsync; the high-water mark stays until reset with 0.
  REQUIRE(cudaSetDevice(4) == cudaSuccess);
  void* p = nullptr;
  REQUIRE(cudaMallocAsync(&p, 4096, nullptr) == cudaSuccess);
  uint64_t used = 0, high = 0;
  REQUIRE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
  CHECK(used >= 4096);
  REQUIRE(cudaFreeAsync(p, nullptr) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
  REQUIRE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess);
  CHECK(used == 0);
  REQUIRE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high) == cudaSuccess);
  CHECK(high >= 4096);
  uint64_t zero = 0, one = 1;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &one) == cudaErrorInvalidValue);
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &zero) == cudaErrorInvalidValue);
  REQUIRE(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero) == cudaSuccess);
  REQUIRE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high) == cudaSuccess);
  CHECK(high == 0);

  CHECK(cudaMemPoolTrimTo(pool, 0) == cudaSuccess);
  cudaMemAccessDesc desc{};
  desc.location.type = cudaMemLocationTypeDevice;
  desc.location.id = 5;
  desc.flags = cudaMemAccessFlagsProtReadWrite;
  CHECK(cudaMemPoolSetAccess(pool, &desc, 1) == cudaSuccess);
  desc.location.id = 100000;
  CHECK(cudaMemPoolSetAccess(pool, &desc, 1) == cudaErrorInvalidDevice);
  int not_a_pool = 0;
  CHECK(cudaMemPoolTrimTo(reinterpret_cast<cudaMemPool_t>(&not_a_pool), 0) == cudaErrorInvalidValue);
  cudaGetLastError();
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("cudaHostRegister tracks ranges and returns CUDA's error codes", "[memory][host_register]") {
  std::vector<char> buffer(1 << 16);
  char* base = buffer.data();
  REQUIRE(cudaHostRegister(base, buffer.size(), cudaHostRegisterDefault) == cudaSuccess);
  cudaPointerAttributes attr;
  REQUIRE(cudaPointerGetAttributes(&attr, base + 100) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeHost);
  CHECK(attr.hostPointer == base + 100);
  CHECK(cudaHostRegister(base, buffer.size(), 0) == cudaErrorHostMemoryAlreadyRegistered);
  CHECK(cudaHostRegister(base + 4096, 4096, 0) == cudaErrorHostMemoryAlreadyRegistered);  // overlap
  CHECK(cudaGetLastError() == cudaErrorHostMemoryAlreadyRegistered);
  CHECK(cudaFreeHost(base) == cudaErrorInvalidValue);  // registered, not allocated by CUDA
  CHECK(cudaHostUnregister(base + 4096) == cudaErrorHostMemoryNotRegistered);
  REQUIRE(cudaHostUnregister(base) == cudaSuccess);
  CHECK(cudaHostUnregister(base) == cudaErrorHostMemoryNotRegistered);
  REQUIRE(cudaPointerGetAttributes(&attr, base) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeUnregistered);
  CHECK(cudaHostRegister(nullptr, 16, 0) == cudaErrorInvalidValue);
  cudaGetLastError();
}
