// The entry points torch 2.15 imports beyond the basics: IPC, occupancy and function
// attributes, peer access, libraries, launches, graph nodes and user objects, pitched and peer
// copies, symbols, driver entry points, and what the sim declines.
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

namespace {

void KernelStandIn() {}
const void* const kKernel = reinterpret_cast<const void*>(&KernelStandIn);

}  // namespace

TEST_CASE("IPC handles: opening one in the exporting process fails as in CUDA", "[ipc]") {
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, 1 << 12) == cudaSuccess);
  cudaIpcMemHandle_t handle;
  REQUIRE(cudaIpcGetMemHandle(&handle, static_cast<char*>(p) + 64) == cudaSuccess);
  void* opened = nullptr;
  CHECK(cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess) == cudaErrorDeviceUninitialized);
  CHECK(cudaGetLastError() == cudaErrorDeviceUninitialized);
  cudaIpcMemHandle_t garbage;
  std::memset(&garbage, 0x5a, sizeof(garbage));
  CHECK(cudaIpcOpenMemHandle(&opened, garbage, 0) == cudaErrorInvalidValue);
  int host = 0;
  CHECK(cudaIpcGetMemHandle(&handle, &host) == cudaErrorInvalidValue);
  CHECK(cudaIpcCloseMemHandle(p) == cudaErrorInvalidValue);  // never opened
  REQUIRE(cudaFree(p) == cudaSuccess);

  cudaEvent_t plain, shared;
  REQUIRE(cudaEventCreate(&plain) == cudaSuccess);
  REQUIRE(cudaEventCreateWithFlags(&shared, cudaEventInterprocess | cudaEventDisableTiming) == cudaSuccess);
  cudaIpcEventHandle_t event_handle;
  CHECK(cudaIpcGetEventHandle(&event_handle, plain) == cudaErrorInvalidResourceHandle);
  REQUIRE(cudaIpcGetEventHandle(&event_handle, shared) == cudaSuccess);
  cudaEvent_t opened_event;
  CHECK(cudaIpcOpenEventHandle(&opened_event, event_handle) == cudaErrorDeviceUninitialized);
  cudaEventDestroy(plain);
  cudaEventDestroy(shared);
  cudaGetLastError();
}

TEST_CASE("occupancy and function attributes come from the profile", "[occupancy]") {
  cudaDeviceProp prop;
  REQUIRE(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
  int blocks = -1;
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kKernel, 256, 0) == cudaSuccess);
  CHECK(blocks == prop.maxThreadsPerMultiProcessor / 256);
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kKernel, 32, 0) == cudaSuccess);
  CHECK(blocks == prop.maxBlocksPerMultiProcessor);
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, kKernel, 1024, 0,
                                                                 cudaOccupancyDisableCachingOverride) == cudaSuccess);
  CHECK(blocks == prop.maxThreadsPerMultiProcessor / 1024);
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kKernel, 2048, 0) == cudaSuccess);
  CHECK(blocks == 0);  // larger than a block may be
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, nullptr, 256, 0) == cudaErrorInvalidDeviceFunction);

  cudaFuncAttributes attr;
  REQUIRE(cudaFuncGetAttributes(&attr, kKernel) == cudaSuccess);
  CHECK(attr.maxThreadsPerBlock == prop.maxThreadsPerBlock);
  CHECK(attr.numRegs > 0);
  CHECK(attr.maxDynamicSharedSizeBytes == static_cast<int>(prop.sharedMemPerBlock));
  const int optin = static_cast<int>(prop.sharedMemPerBlockOptin);
  REQUIRE(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin) == cudaSuccess);
  REQUIRE(cudaFuncGetAttributes(&attr, kKernel) == cudaSuccess);
  CHECK(attr.maxDynamicSharedSizeBytes == optin);
  CHECK(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin + 1) ==
        cudaErrorInvalidValue);
  CHECK(cudaFuncGetAttributes(&attr, nullptr) == cudaErrorInvalidDeviceFunction);
  CHECK(cudaFuncSetAttribute(nullptr, cudaFuncAttributePreferredSharedMemoryCarveout, 50) ==
        cudaErrorInvalidDeviceFunction);
  CHECK(cudaKernelSetAttributeForDevice(reinterpret_cast<cudaKernel_t>(const_cast<void*>(kKernel)),
                                        cudaFuncAttributePreferredSharedMemoryCarveout, 50, 1) == cudaSuccess);
  REQUIRE(cudaFuncGetAttributes(&attr, kKernel) == cudaSuccess);
  CHECK(attr.preferredShmemCarveout == 50);
  CHECK(cudaKernelSetAttributeForDevice(reinterpret_cast<cudaKernel_t>(const_cast<void*>(kKernel)),
                                        cudaFuncAttributePreferredSharedMemoryCarveout, 50, 100000) ==
        cudaErrorInvalidDevice);
  cudaGetLastError();
}

TEST_CASE("peer access and PCI bus ids", "[peer]") {
  int can = -1;
  REQUIRE(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
  CHECK(can == 1);
  REQUIRE(cudaDeviceCanAccessPeer(&can, 2, 2) == cudaSuccess);
  CHECK(can == 0);
  CHECK(cudaDeviceCanAccessPeer(&can, 0, 100000) == cudaErrorInvalidDevice);
  REQUIRE(cudaSetDevice(5) == cudaSuccess);
  REQUIRE(cudaDeviceEnablePeerAccess(4, 0) == cudaSuccess);
  CHECK(cudaDeviceEnablePeerAccess(4, 0) == cudaErrorPeerAccessAlreadyEnabled);
  CHECK(cudaDeviceEnablePeerAccess(5, 0) == cudaErrorInvalidDevice);
  REQUIRE(cudaDeviceDisablePeerAccess(4) == cudaSuccess);
  CHECK(cudaDeviceDisablePeerAccess(4) == cudaErrorPeerAccessNotEnabled);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  char bus[32];
  REQUIRE(cudaDeviceGetPCIBusId(bus, sizeof(bus), 5) == cudaSuccess);
  CHECK(std::string(bus) == "0000:05:00.0");
  CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), 100000) == cudaErrorInvalidDevice);
  cudaGetLastError();
}

TEST_CASE("pitched and peer copies run in stream order", "[memory][copy]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  std::vector<char> src(4 * 16), dst(4 * 8, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i);
  REQUIRE(cudaMemcpy2DAsync(dst.data(), 8, src.data(), 16, 6, 4, cudaMemcpyDefault, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  for (int row = 0; row < 4; ++row) {
    CHECK(dst[row * 8 + 5] == src[row * 16 + 5]);
    CHECK(dst[row * 8 + 6] == 0);  // outside the width
  }
  CHECK(cudaMemcpy2DAsync(dst.data(), 4, src.data(), 16, 6, 4, cudaMemcpyDefault, s) == cudaErrorInvalidPitchValue);
  std::vector<char> peer_dst(64, 0);
  REQUIRE(cudaMemcpyPeerAsync(peer_dst.data(), 1, src.data(), 0, 64, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(peer_dst == std::vector<char>(src.begin(), src.end()));
  CHECK(cudaMemcpyPeerAsync(peer_dst.data(), 100000, src.data(), 0, 64, s) == cudaErrorInvalidDevice);
  int value = 3;
  CHECK(cudaMemcpyToSymbol(&value, &value, sizeof(value), 0, cudaMemcpyHostToDevice) == cudaErrorInvalidSymbol);
  void* address = nullptr;
  CHECK(cudaGetSymbolAddress(&address, &value) == cudaErrorInvalidSymbol);
  cudaGetLastError();
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("libraries are opaque handles without symbols", "[library]") {
  const char image[] = "not a real cubin";
  cudaLibrary_t library = nullptr;
  REQUIRE(cudaLibraryLoadData(&library, image, nullptr, nullptr, 0, nullptr, nullptr, 0) == cudaSuccess);
  cudaKernel_t a = nullptr, b = nullptr, again = nullptr;
  REQUIRE(cudaLibraryGetKernel(&a, library, "a") == cudaSuccess);
  REQUIRE(cudaLibraryGetKernel(&b, library, "b") == cudaSuccess);
  REQUIRE(cudaLibraryGetKernel(&again, library, "a") == cudaSuccess);
  CHECK(a != b);
  CHECK(a == again);
  unsigned count = 0;
  REQUIRE(cudaLibraryGetKernelCount(&count, library) == cudaSuccess);
  CHECK(count == 2);
  void* global = nullptr;
  size_t bytes = 0;
  CHECK(cudaLibraryGetGlobal(&global, &bytes, library, "g") == cudaErrorSymbolNotFound);
  CHECK(cudaLibraryGetManaged(&global, &bytes, library, "m") == cudaErrorSymbolNotFound);
  CHECK(cudaLibraryGetUnifiedFunction(&global, library, "f") == cudaErrorSymbolNotFound);
  REQUIRE(cudaLibraryUnload(library) == cudaSuccess);
  CHECK(cudaLibraryUnload(library) == cudaErrorInvalidResourceHandle);
  CHECK(cudaLibraryLoadFromFile(&library, "/nonexistent/ncclsim.cubin", nullptr, nullptr, 0, nullptr, nullptr, 0) ==
        cudaErrorFileNotFound);
  cudaGetLastError();
}

TEST_CASE("extended and cooperative launches take their place in the stream", "[launch]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(4);
  config.blockDim = dim3(128);
  config.stream = s;
  REQUIRE(cudaLaunchKernelExC(&config, kKernel, nullptr) == cudaSuccess);
  REQUIRE(cudaLaunchCooperativeKernel(kKernel, dim3(8), dim3(256), nullptr, 0, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(cudaLaunchKernelExC(&config, nullptr, nullptr) == cudaErrorInvalidDeviceFunction);
  config.blockDim = dim3(2048);
  CHECK(cudaLaunchKernelExC(&config, kKernel, nullptr) == cudaErrorInvalidConfiguration);
  CHECK(cudaLaunchCooperativeKernel(kKernel, dim3(1 << 20), dim3(256), nullptr, 0, s) ==
        cudaErrorCooperativeLaunchTooLarge);
  CHECK(cudaProfilerStart() == cudaSuccess);
  CHECK(cudaProfilerStop() == cudaSuccess);
  cudaGetLastError();
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("captured work becomes a chain of graph nodes", "[capture][graph]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  for (int i = 0; i < 3; ++i) REQUIRE(cudaLaunchKernel(kKernel, dim3(1), dim3(1), nullptr, 0, s) == cudaSuccess);
  cudaGraphNode_t no_deps = nullptr;
  REQUIRE(cudaStreamUpdateCaptureDependencies(s, &no_deps, nullptr, 0, cudaStreamSetCaptureDependencies) ==
          cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  size_t count = 0;
  REQUIRE(cudaGraphGetNodes(graph, nullptr, &count) == cudaSuccess);
  CHECK(count == 3);
  std::vector<cudaGraphNode_t> nodes(4, reinterpret_cast<cudaGraphNode_t>(1));
  count = nodes.size();
  REQUIRE(cudaGraphGetNodes(graph, nodes.data(), &count) == cudaSuccess);
  CHECK(count == 3);
  CHECK(nodes[3] == nullptr);
  size_t deps = 5;
  cudaGraphNode_t dep = nullptr;
  REQUIRE(cudaGraphNodeGetDependencies(nodes[2], nullptr, nullptr, &deps) == cudaSuccess);
  CHECK(deps == 1);
  REQUIRE(cudaGraphNodeGetDependencies(nodes[2], &dep, nullptr, &deps) == cudaSuccess);
  CHECK(dep == nodes[1]);
  REQUIRE(cudaGraphNodeGetDependencies(nodes[0], nullptr, nullptr, &deps) == cudaSuccess);
  CHECK(deps == 0);

  // cudaGraphAddNode after a captured node; a node of another graph is refused.
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeEmpty;
  cudaGraphNode_t added = nullptr;
  REQUIRE(cudaGraphAddNode(&added, graph, &nodes[2], nullptr, 1, &params) == cudaSuccess);
  REQUIRE(cudaGraphGetNodes(graph, nullptr, &count) == cudaSuccess);
  CHECK(count == 4);

  // Capturing into this graph appends to it, after the given dependencies.
  REQUIRE(cudaStreamBeginCaptureToGraph(s, graph, &added, nullptr, 1, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  REQUIRE(cudaLaunchKernel(kKernel, dim3(1), dim3(1), nullptr, 0, s) == cudaSuccess);
  cudaGraph_t same = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &same) == cudaSuccess);
  CHECK(same == graph);
  nodes.assign(5, nullptr);
  count = nodes.size();
  REQUIRE(cudaGraphGetNodes(graph, nodes.data(), &count) == cudaSuccess);
  CHECK(count == 5);
  REQUIRE(cudaGraphNodeGetDependencies(nodes[4], &dep, nullptr, &(deps = 1)) == cudaSuccess);
  CHECK(dep == added);
  CHECK(cudaStreamUpdateCaptureDependencies(s, nullptr, nullptr, 0, 0) == cudaErrorIllegalState);  // not capturing

  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  REQUIRE(cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(cudaGraphGetNodes(graph, nullptr, &count) == cudaErrorInvalidValue);
  CHECK(cudaGraphNodeGetDependencies(added, nullptr, nullptr, &deps) == cudaErrorInvalidValue);
  cudaGetLastError();
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("a graph keeps user objects alive until it is destroyed", "[graph][user_object]") {
  static std::atomic<int> destroyed{0};
  destroyed = 0;
  cudaUserObject_t object = nullptr;
  CHECK(cudaUserObjectCreate(&object, &destroyed, [](void* d) { ++*static_cast<std::atomic<int>*>(d); }, 1, 0) ==
        cudaErrorInvalidValue);  // CUDA requires cudaUserObjectNoDestructorSync
  REQUIRE(cudaUserObjectCreate(&object, &destroyed, [](void* d) { ++*static_cast<std::atomic<int>*>(d); }, 1,
                               cudaUserObjectNoDestructorSync) == cudaSuccess);
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  REQUIRE(cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove) == cudaSuccess);
  CHECK(destroyed == 0);
  REQUIRE(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(destroyed == 1);
  CHECK(cudaUserObjectRelease(object, 1) == cudaErrorInvalidValue);  // already gone
  cudaGetLastError();
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("unsupported requests fail with their error code and do not crash", "[unsupported]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  cudaGraphConditionalHandle handle = 0;
  CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0) == cudaErrorNotSupported);
  CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0) == cudaErrorNotSupported);  // stderr line once
  CHECK(cudaGetLastError() == cudaErrorNotSupported);
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  cudaGraphNode_t node = nullptr;
  CHECK(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params) == cudaErrorNotSupported);
  REQUIRE(cudaGraphDestroy(graph) == cudaSuccess);

  // An unknown driver symbol, whether or not a libcuda.so.1 is around to ask: success, a null
  // function and the status say so (cuda_runtime_api.h).
  void* function = reinterpret_cast<void*>(1);
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSuccess;
  CHECK(cudaGetDriverEntryPointByVersion("cuNcclsimNoSuchFunction", &function, 13000, cudaEnableDefault, &status) ==
        cudaSuccess);
  CHECK(function == nullptr);
  CHECK(status == cudaDriverEntryPointSymbolNotFound);
  uint64_t value = 0;
  REQUIRE(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &value) == cudaSuccess);
  CHECK(value == 0);
  value = 1;
  CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &value) == cudaErrorInvalidValue);
  cudaGetLastError();
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}
