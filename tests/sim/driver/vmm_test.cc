#include <cuda.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

namespace {

CUmemAllocationProp DeviceProp(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

CUresult AllowReadWrite(CUdeviceptr ptr, size_t size, int device) {
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return cuMemSetAccess(ptr, size, &access, 1);
}

}  // namespace

TEST_CASE("VMM: reserve, create, map, set access, write, read, unmap, free", "[vmm]") {
  CUmemAllocationProp prop = DeviceProp(1);
  size_t granularity = 0;
  REQUIRE(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) == CUDA_SUCCESS);
  CHECK(granularity == (size_t{2} << 20));

  // An 80 GiB reservation, as PyTorch's expandable segments make: address space only.
  const size_t reserved = size_t{80} << 30;
  CUdeviceptr base = 0;
  REQUIRE(cuMemAddressReserve(&base, reserved, 0, 0, 0) == CUDA_SUCCESS);
  CHECK(base % granularity == 0);

  CUmemGenericAllocationHandle handle = 0;
  CHECK(cuMemCreate(&handle, granularity + 1, &prop, 0) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(cuMemCreate(&handle, 2 * granularity, &prop, 0) == CUDA_SUCCESS);
  CUmemAllocationProp got{};
  REQUIRE(cuMemGetAllocationPropertiesFromHandle(&got, handle) == CUDA_SUCCESS);
  CHECK(got.location.id == 1);

  const CUdeviceptr at = base + 4 * granularity;
  REQUIRE(cuMemMap(at, 2 * granularity, 0, handle, 0) == CUDA_SUCCESS);
  CHECK(cuMemMap(at, 2 * granularity, 0, handle, 0) == CUDA_ERROR_ALREADY_MAPPED);
  REQUIRE(AllowReadWrite(at, 2 * granularity, 1) == CUDA_SUCCESS);
  auto* bytes = reinterpret_cast<unsigned char*>(at);
  bytes[0] = 0x5a;
  bytes[2 * granularity - 1] = 0xa5;
  CHECK(bytes[0] == 0x5a);
  CHECK(bytes[2 * granularity - 1] == 0xa5);

  // The driver sees the mapping as one allocation.
  CUdeviceptr range_base = 0;
  size_t range_size = 0;
  REQUIRE(cuMemGetAddressRange(&range_base, &range_size, at + 100) == CUDA_SUCCESS);
  CHECK(range_base == at);
  CHECK(range_size == 2 * granularity);
  int ordinal = -1;
  REQUIRE(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, at + 7) == CUDA_SUCCESS);
  CHECK(ordinal == 1);
  CUmemGenericAllocationHandle retained = 0;
  REQUIRE(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(at)) == CUDA_SUCCESS);
  CHECK(retained == handle);
  REQUIRE(cuMemRelease(retained) == CUDA_SUCCESS);

  // Released while mapped: the memory stays until unmapped, as in CUDA.
  REQUIRE(cuMemRelease(handle) == CUDA_SUCCESS);
  CHECK(bytes[0] == 0x5a);
  CHECK(cuMemAddressFree(base, reserved) == CUDA_ERROR_INVALID_VALUE);  // still mapped
  REQUIRE(cuMemUnmap(at, 2 * granularity) == CUDA_SUCCESS);
  CHECK(cuMemGetAddressRange(&range_base, &range_size, at) == CUDA_ERROR_NOT_FOUND);
  CHECK(cuMemRelease(handle) == CUDA_ERROR_INVALID_VALUE);  // gone
  REQUIRE(cuMemAddressFree(base, reserved) == CUDA_SUCCESS);
}

TEST_CASE("VMM: one allocation mapped twice shows the same bytes", "[vmm]") {
  CUmemAllocationProp prop = DeviceProp(0);
  const size_t g = size_t{2} << 20;
  CUdeviceptr base = 0;
  REQUIRE(cuMemAddressReserve(&base, 4 * g, 0, 0, 0) == CUDA_SUCCESS);
  CUmemGenericAllocationHandle handle = 0;
  REQUIRE(cuMemCreate(&handle, g, &prop, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemMap(base, g, 0, handle, 0) == CUDA_SUCCESS);
  REQUIRE(cuMemMap(base + 2 * g, g, 0, handle, 0) == CUDA_SUCCESS);
  REQUIRE(AllowReadWrite(base, g, 0) == CUDA_SUCCESS);
  REQUIRE(AllowReadWrite(base + 2 * g, g, 0) == CUDA_SUCCESS);
  std::memcpy(reinterpret_cast<void*>(base + 64), "shared", 7);
  CHECK(std::memcmp(reinterpret_cast<void*>(base + 2 * g + 64), "shared", 7) == 0);
  CHECK(AllowReadWrite(base + g, g, 0) == CUDA_ERROR_INVALID_VALUE);  // not mapped
  CHECK(cuMemMap(base + 3 * g, 2 * g, 0, handle, 0) == CUDA_ERROR_INVALID_VALUE);  // beyond the reservation
  REQUIRE(cuMemUnmap(base, g) == CUDA_SUCCESS);
  REQUIRE(cuMemUnmap(base + 2 * g, g) == CUDA_SUCCESS);
  REQUIRE(cuMemRelease(handle) == CUDA_SUCCESS);
  REQUIRE(cuMemAddressFree(base, 4 * g) == CUDA_SUCCESS);
}

TEST_CASE("VMM: bad properties are refused", "[vmm]") {
  CUmemAllocationProp prop = DeviceProp(9);
  CUmemGenericAllocationHandle handle = 0;
  CHECK(cuMemCreate(&handle, size_t{2} << 20, &prop, 0) == CUDA_ERROR_INVALID_DEVICE);
  prop = DeviceProp(0);
  prop.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  CHECK(cuMemCreate(&handle, size_t{2} << 20, &prop, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemMap(0, size_t{2} << 20, 0, 12345, 0) == CUDA_ERROR_INVALID_HANDLE);
}
