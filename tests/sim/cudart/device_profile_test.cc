// The simulated device looks like a real GPU: every cudaDeviceAttr of the CUDA headers has an
// answer, the numbers jobs divide by are positive, cudaGetDeviceProperties agrees with
// cudaDeviceGetAttribute, and NCCLSIM_DEVICE_PROFILE picks the GPU model.
#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace {

// Every enumerator of enum cudaDeviceAttr, read from the driver_types.h the sim was built with.
std::map<std::string, int> DeviceAttributesOfHeader() {
  std::ifstream in(NCCLSIM_TEST_DRIVER_TYPES_H);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const size_t begin = all.find("enum __device_builtin__ cudaDeviceAttr");
  const size_t end = all.find("};", begin);
  const std::string body = all.substr(begin, end - begin);
  std::map<std::string, int> attributes;
  const std::regex enumerator(R"((cudaDevAttr\w+)\s*=\s*(\d+))");
  for (std::sregex_iterator it(body.begin(), body.end(), enumerator), last; it != last; ++it) {
    attributes[(*it)[1]] = std::stoi((*it)[2]);
  }
  return attributes;
}

int Attribute(cudaDeviceAttr attribute, int device = 0) {
  int value = -12345;
  REQUIRE(cudaDeviceGetAttribute(&value, attribute, device) == cudaSuccess);
  return value;
}

}  // namespace

TEST_CASE("every cudaDeviceAttr of the headers is answered", "[device][profile]") {
  const auto attributes = DeviceAttributesOfHeader();
  REQUIRE(attributes.size() >= 137);  // CUDA 13.0 declares 137, the last one:
  REQUIRE(attributes.count("cudaDevAttrOnlyPartialHostNativeAtomicSupported") == 1);
  for (const auto& [name, number] : attributes) {
    INFO(name);
    int value = -12345;
    CHECK(cudaDeviceGetAttribute(&value, static_cast<cudaDeviceAttr>(number), 1) == cudaSuccess);
    CHECK(value != -12345);
  }
  int value = 0;
  CHECK(cudaDeviceGetAttribute(&value, static_cast<cudaDeviceAttr>(44), 0) == cudaErrorInvalidValue);  // a gap
  CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMax, 0) == cudaErrorInvalidValue);
  CHECK(cudaDeviceGetAttribute(nullptr, cudaDevAttrWarpSize, 0) == cudaErrorInvalidValue);
  CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, 100000) == cudaErrorInvalidDevice);
  cudaGetLastError();
}

TEST_CASE("the attributes jobs divide by are positive", "[device][profile]") {
  for (cudaDeviceAttr a : {cudaDevAttrMultiProcessorCount, cudaDevAttrWarpSize, cudaDevAttrMaxThreadsPerBlock,
                           cudaDevAttrMaxThreadsPerMultiProcessor, cudaDevAttrMaxRegistersPerMultiprocessor,
                           cudaDevAttrMaxRegistersPerBlock, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                           cudaDevAttrMaxSharedMemoryPerBlock, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                           cudaDevAttrMaxBlocksPerMultiprocessor, cudaDevAttrClockRate,
                           cudaDevAttrMemoryClockRate, cudaDevAttrGlobalMemoryBusWidth, cudaDevAttrL2CacheSize,
                           cudaDevAttrMaxGridDimX, cudaDevAttrMaxBlockDimX, cudaDevAttrAsyncEngineCount,
                           cudaDevAttrMemoryPoolsSupported, cudaDevAttrCooperativeLaunch}) {
    INFO("attribute " << a);
    CHECK(Attribute(a) > 0);
  }
  cudaDeviceProp prop;
  REQUIRE(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
  CHECK(prop.totalGlobalMem >= (size_t{40} << 30));
  CHECK(prop.maxThreadsPerMultiProcessor % prop.warpSize == 0);
  CHECK(prop.maxThreadsPerMultiProcessor >= prop.maxThreadsPerBlock);
  CHECK(prop.sharedMemPerBlockOptin >= prop.sharedMemPerBlock);
  CHECK(prop.sharedMemPerMultiprocessor >= prop.sharedMemPerBlockOptin);
}

TEST_CASE("cudaGetDeviceProperties agrees with cudaDeviceGetAttribute", "[device][profile]") {
  const int device = 3;
  cudaDeviceProp p;
  REQUIRE(cudaGetDeviceProperties(&p, device) == cudaSuccess);
  CHECK(std::string(p.name) == "ncclsim CPU device 3");
  const std::pair<cudaDeviceAttr, long long> pairs[] = {
      {cudaDevAttrMultiProcessorCount, p.multiProcessorCount},
      {cudaDevAttrWarpSize, p.warpSize},
      {cudaDevAttrMaxThreadsPerBlock, p.maxThreadsPerBlock},
      {cudaDevAttrMaxThreadsPerMultiProcessor, p.maxThreadsPerMultiProcessor},
      {cudaDevAttrMaxRegistersPerBlock, p.regsPerBlock},
      {cudaDevAttrMaxRegistersPerMultiprocessor, p.regsPerMultiprocessor},
      {cudaDevAttrMaxSharedMemoryPerBlock, static_cast<long long>(p.sharedMemPerBlock)},
      {cudaDevAttrMaxSharedMemoryPerBlockOptin, static_cast<long long>(p.sharedMemPerBlockOptin)},
      {cudaDevAttrMaxSharedMemoryPerMultiprocessor, static_cast<long long>(p.sharedMemPerMultiprocessor)},
      {cudaDevAttrMaxBlocksPerMultiprocessor, p.maxBlocksPerMultiProcessor},
      {cudaDevAttrComputeCapabilityMajor, p.major},
      {cudaDevAttrComputeCapabilityMinor, p.minor},
      {cudaDevAttrL2CacheSize, p.l2CacheSize},
      {cudaDevAttrGlobalMemoryBusWidth, p.memoryBusWidth},
      {cudaDevAttrMaxBlockDimZ, p.maxThreadsDim[2]},
      {cudaDevAttrMaxGridDimY, p.maxGridSize[1]},
      {cudaDevAttrPciBusId, p.pciBusID},
      {cudaDevAttrAsyncEngineCount, p.asyncEngineCount},
      {cudaDevAttrMemoryPoolsSupported, p.memoryPoolsSupported},
      {cudaDevAttrClusterLaunch, p.clusterLaunch},
      {cudaDevAttrMaxTexture2DLayeredLayers, p.maxTexture2DLayered[2]},
      {cudaDevAttrMaxSurfaceCubemapLayeredLayers, p.maxSurfaceCubemapLayered[1]},
      {cudaDevAttrGpuPciDeviceId, static_cast<int>(p.gpuPciDeviceID)},
  };
  for (const auto& [attribute, field] : pairs) {
    INFO("attribute " << attribute);
    CHECK(Attribute(attribute, device) == field);
  }
  CHECK(p.pciBusID == device);
}

// Run by ctest with NCCLSIM_DEVICE_PROFILE unset, "a100" and an unknown value (-> h100).
TEST_CASE("NCCLSIM_DEVICE_PROFILE selects the GPU model", "[device][profile]") {
  const char* env = std::getenv("NCCLSIM_DEVICE_PROFILE");
  const bool a100 = env != nullptr && std::string(env) == "a100";
  cudaDeviceProp p;
  REQUIRE(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
  CHECK(p.multiProcessorCount == (a100 ? 108 : 132));
  CHECK(p.major == (a100 ? 8 : 9));
  CHECK(p.sharedMemPerMultiprocessor == size_t{a100 ? 164u : 228u} * 1024);
  CHECK(p.l2CacheSize == (a100 ? 40 : 50) << 20);
  CHECK(p.totalGlobalMem == size_t{80} << 30);
  CHECK(Attribute(cudaDevAttrClockRate) == (a100 ? 1410000 : 1980000));
}
