// cuDeviceComputeCapability is deprecated in cuda.h but still exported; it is tested here.
#define CUDA_ENABLE_DEPRECATED 1
#include <cuda.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

// NCCLSIM_DEVICES=4 (see CMakeLists.txt).
TEST_CASE("cuInit accepts only flags 0; the driver reports version 13000", "[device]") {
  CHECK(cuInit(1) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuInit(0) == CUDA_SUCCESS);
  int version = 0;
  REQUIRE(cuDriverGetVersion(&version) == CUDA_SUCCESS);
  CHECK(version == 13000);
  CHECK(cuDriverGetVersion(nullptr) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("devices are the runtime's: count, ordinals and names", "[device]") {
  int count = 0;
  REQUIRE(cuDeviceGetCount(&count) == CUDA_SUCCESS);
  CHECK(count == 4);
  CUdevice dev = -1;
  REQUIRE(cuDeviceGet(&dev, 3) == CUDA_SUCCESS);
  CHECK(dev == 3);
  CHECK(cuDeviceGet(&dev, 4) == CUDA_ERROR_INVALID_DEVICE);
  CHECK(cuDeviceGet(&dev, -1) == CUDA_ERROR_INVALID_DEVICE);
  char name[64];
  REQUIRE(cuDeviceGetName(name, sizeof(name), 2) == CUDA_SUCCESS);
  CHECK(std::string(name) == "ncclsim CPU device 2");
}

TEST_CASE("device attributes are an H100's", "[device]") {
  int v = 0;
  REQUIRE(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0) == CUDA_SUCCESS);
  CHECK(v == 132);
  int major = 0, minor = -1;
  REQUIRE(cuDeviceComputeCapability(&major, &minor, 1) == CUDA_SUCCESS);
  CHECK(major == 9);
  CHECK(minor == 0);
  REQUIRE(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0) == CUDA_SUCCESS);
  CHECK(v == 32);
  CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7) == CUDA_ERROR_INVALID_DEVICE);
}

TEST_CASE("device memory is an H100's 80 GiB", "[memory_size]") {
  size_t total = 0;
  REQUIRE(cuDeviceTotalMem(&total, 0) == CUDA_SUCCESS);
  CHECK(total == (size_t{80} << 30));
  size_t free_bytes = 0;
  total = 0;
  REQUIRE(cuMemGetInfo(&free_bytes, &total) == CUDA_SUCCESS);
  CHECK(total == (size_t{80} << 30));
  CHECK(free_bytes <= total);
}

TEST_CASE("UUIDs differ per device and both ABI variants agree", "[device]") {
  CUuuid a, b, a_v1;
  REQUIRE(cuDeviceGetUuid_v2(&a, 0) == CUDA_SUCCESS);
  REQUIRE(cuDeviceGetUuid_v2(&b, 1) == CUDA_SUCCESS);
  CHECK(std::memcmp(&a, &b, sizeof(a)) != 0);
  REQUIRE(cuDeviceGetUuid(&a_v1, 0) == CUDA_SUCCESS);
  CHECK(std::memcmp(&a, &a_v1, sizeof(a)) == 0);
}

TEST_CASE("PCI bus ids have the driver's format and map back to the device", "[device]") {
  char bus[32];
  REQUIRE(cuDeviceGetPCIBusId(bus, sizeof(bus), 3) == CUDA_SUCCESS);
  CHECK(std::strlen(bus) == 12);  // dddd:bb:dd.f
  CHECK(bus[4] == ':');
  CUdevice dev = -1;
  REQUIRE(cuDeviceGetByPCIBusId(&dev, bus) == CUDA_SUCCESS);
  CHECK(dev == 3);
}

TEST_CASE("error names and strings are the driver's", "[error]") {
  const char* s = nullptr;
  REQUIRE(cuGetErrorName(CUDA_ERROR_NOT_READY, &s) == CUDA_SUCCESS);
  CHECK(std::string(s) == "CUDA_ERROR_NOT_READY");
  REQUIRE(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s) == CUDA_SUCCESS);
  CHECK(std::string(s) == "invalid argument");
  REQUIRE(cuGetErrorString(CUDA_ERROR_NOT_SUPPORTED, &s) == CUDA_SUCCESS);
  CHECK(std::string(s) == "operation not supported");
  CHECK(cuGetErrorString(static_cast<CUresult>(123456), &s) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s == nullptr);
}

TEST_CASE("an unsupported entry point returns CUDA_ERROR_NOT_SUPPORTED without crashing", "[error]") {
  CUgraph graph = nullptr;
  CHECK(cuGraphClone(&graph, nullptr) == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(cuGraphClone(&graph, nullptr) == CUDA_ERROR_NOT_SUPPORTED);  // reported once, still refused
  CHECK(graph == nullptr);
  CUmemGenericAllocationHandle h = 0;
  int fd = -1;
  CHECK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) ==
        CUDA_ERROR_NOT_SUPPORTED);
}
