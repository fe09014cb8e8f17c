// Stream capture and graphs through the driver API: the runtime's captures and graphs
// (sim/driver/api_graph.cc), and never a change to the runtime's last error.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <atomic>

// The older and per-thread forms, which cuda.h maps its plain names away from.
#undef cuStreamGetCaptureInfo
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
extern "C" {
CUresult cuStreamGetCaptureInfo(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id);
CUresult cuGraphInstantiate(CUgraphExec* exec, CUgraph graph, CUgraphNode* error_node, char* log, size_t size);
CUresult cuGraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphNode* error_node, CUgraphExecUpdateResult* result);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream stream, CUstreamCaptureMode mode);
CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph* graph);
CUresult cuLaunchHostFunc_ptsz(CUstream stream, CUhostFn fn, void* data);
CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream);
CUresult cuStreamSynchronize_ptsz(CUstream stream);
}

namespace {

void Count(void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }
void Destroyed(void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); }

}  // namespace

TEST_CASE("a driver capture records work that every cuGraphLaunch runs again", "[graph]") {
  CUstream stream;
  REQUIRE(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  void* buffer = nullptr;
  REQUIRE(cudaMalloc(&buffer, 16) == cudaSuccess);
  const auto dptr = reinterpret_cast<CUdeviceptr>(buffer);
  std::atomic<int> calls{0};

  REQUIRE(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
  REQUIRE(cuMemsetD8Async(dptr, 0x5a, 16, stream) == CUDA_SUCCESS);
  REQUIRE(cuLaunchHostFunc(stream, Count, &calls) == CUDA_SUCCESS);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0, id_v1 = 0;
  CUgraph graph = nullptr;
  const CUgraphNode* deps = nullptr;
  size_t count = 0;
  REQUIRE(cuStreamGetCaptureInfo_v3(stream, &status, &id, &graph, &deps, nullptr, &count) == CUDA_SUCCESS);
  CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  CHECK(count == 1);
  REQUIRE(cuStreamGetCaptureInfo(stream, &status, &id_v1) == CUDA_SUCCESS);
  CHECK(id_v1 == id);
  cudaStreamCaptureStatus rt_status = cudaStreamCaptureStatusNone;
  REQUIRE(cudaStreamIsCapturing(stream, &rt_status) == cudaSuccess);  // the runtime's capture
  CHECK(rt_status == cudaStreamCaptureStatusActive);
  CUgraph ended = nullptr;
  REQUIRE(cuStreamEndCapture(stream, &ended) == CUDA_SUCCESS);
  CHECK(ended == graph);
  CHECK(calls.load() == 0);

  size_t nodes = 0;
  REQUIRE(cuGraphGetNodes(graph, nullptr, &nodes) == CUDA_SUCCESS);
  CHECK(nodes == 2);
  CUgraphNode node[2];
  REQUIRE(cuGraphGetNodes(graph, node, &nodes) == CUDA_SUCCESS);
  CUgraphNodeType type;
  REQUIRE(cuGraphNodeGetType(node[1], &type) == CUDA_SUCCESS);
  CHECK(type == CU_GRAPH_NODE_TYPE_HOST);

  CUgraphExec exec = nullptr;
  REQUIRE(cuGraphInstantiateWithFlags(&exec, graph, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) == CUDA_SUCCESS);
  REQUIRE(cuGraphDestroy(graph) == CUDA_SUCCESS);
  for (int launch = 1; launch <= 3; ++launch) {
    REQUIRE(cudaMemset(buffer, 0, 16) == cudaSuccess);
    REQUIRE(cuGraphLaunch(exec, stream) == CUDA_SUCCESS);
    REQUIRE(cuStreamSynchronize(stream) == CUDA_SUCCESS);
    CHECK(calls.load() == launch);
    CHECK(static_cast<unsigned char*>(buffer)[15] == 0x5a);
  }
  REQUIRE(cuGraphUpload(exec, stream) == CUDA_SUCCESS);
  REQUIRE(cuGraphExecDestroy(exec) == CUDA_SUCCESS);
  cudaFree(buffer);
  cuStreamDestroy(stream);
}

TEST_CASE("driver capture errors are the runtime's, and its last error stays as it was", "[graph]") {
  CUstream stream;
  REQUIRE(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  REQUIRE(cudaSetDevice(999) == cudaErrorInvalidDevice);  // a pending error of the job's
  CUgraph graph = nullptr;
  CHECK(cuStreamEndCapture(stream, &graph) == CUDA_ERROR_ILLEGAL_STATE);
  REQUIRE(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
  CHECK(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_ERROR_ILLEGAL_STATE);
  CHECK(cuStreamSynchronize(stream) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  REQUIRE(cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS);
  CHECK(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  CHECK(cuStreamEndCapture(stream, &graph) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CHECK(graph == nullptr);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
  cudaGetLastError();
  cuStreamDestroy(stream);
}

TEST_CASE("the driver's per-thread forms, thread mode and older entry points", "[graph]") {
  std::atomic<int> calls{0};
  REQUIRE(cuStreamBeginCapture_v2_ptsz(nullptr, CU_STREAM_CAPTURE_MODE_RELAXED) == CUDA_SUCCESS);
  cudaStreamCaptureStatus rt_status = cudaStreamCaptureStatusNone;
  REQUIRE(cudaStreamIsCapturing(cudaStreamPerThread, &rt_status) == cudaSuccess);
  CHECK(rt_status == cudaStreamCaptureStatusActive);
  REQUIRE(cuLaunchHostFunc_ptsz(nullptr, Count, &calls) == CUDA_SUCCESS);
  CUgraph graph = nullptr;
  REQUIRE(cuStreamEndCapture_ptsz(nullptr, &graph) == CUDA_SUCCESS);
  // User objects: the graph's reference, copied into the executable graph, keeps the object.
  std::atomic<bool> destroyed{false};
  CUuserObject object = nullptr;
  REQUIRE(cuUserObjectCreate(&object, &destroyed, Destroyed, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) == CUDA_SUCCESS);
  REQUIRE(cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE) == CUDA_SUCCESS);

  // The 10.0 instantiate, with an error node and a log, and the 10.2 update.
  CUgraphExec exec = nullptr;
  CUgraphNode error_node = reinterpret_cast<CUgraphNode>(0x1);
  char log[16] = "x";
  REQUIRE(cuGraphInstantiate(&exec, graph, &error_node, log, sizeof(log)) == CUDA_SUCCESS);
  CHECK(error_node == nullptr);
  CHECK(log[0] == '\0');
  CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_ERROR;
  REQUIRE(cuGraphExecUpdate(exec, graph, &error_node, &result) == CUDA_SUCCESS);
  CHECK(result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
  REQUIRE(cuGraphLaunch_ptsz(exec, nullptr) == CUDA_SUCCESS);
  REQUIRE(cuStreamSynchronize_ptsz(nullptr) == CUDA_SUCCESS);
  CHECK(calls.load() == 1);

  // A mode set through the driver is the runtime's thread mode.
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  REQUIRE(cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS);
  CHECK(mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
  cudaStreamCaptureMode rt_mode = cudaStreamCaptureModeGlobal;
  REQUIRE(cudaThreadExchangeStreamCaptureMode(&rt_mode) == cudaSuccess);
  CHECK(rt_mode == cudaStreamCaptureModeRelaxed);

  REQUIRE(cuGraphDestroy(graph) == CUDA_SUCCESS);
  CHECK_FALSE(destroyed.load());  // the executable graph holds one too
  REQUIRE(cuGraphExecDestroy(exec) == CUDA_SUCCESS);
  CHECK(destroyed.load());
}
