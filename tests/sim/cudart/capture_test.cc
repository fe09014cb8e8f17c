// Stream capture: what is recorded, the rules that refuse or invalidate, multi-stream captures
// (sim/cudart/capture.h).
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "test_support.h"

extern "C" {
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* graph);
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream);
}

namespace {

using ncclsim_test::SetFlag;

void Count(void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }

cudaStream_t NonBlocking() {
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  return s;
}

cudaStreamCaptureStatus StatusOf(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  REQUIRE(cudaStreamIsCapturing(s, &status) == cudaSuccess);
  return status;
}

std::vector<cudaGraphNode_t> NodesOf(cudaGraph_t graph) {
  size_t n = 0;
  REQUIRE(cudaGraphGetNodes(graph, nullptr, &n) == cudaSuccess);
  std::vector<cudaGraphNode_t> nodes(n);
  REQUIRE(cudaGraphGetNodes(graph, nodes.data(), &n) == cudaSuccess);
  return nodes;
}

cudaGraphNodeType TypeOf(cudaGraphNode_t node) {
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  REQUIRE(cudaGraphNodeGetType(node, &type) == cudaSuccess);
  return type;
}

std::vector<cudaGraphNode_t> DependenciesOf(cudaGraphNode_t node) {
  size_t n = 0;
  REQUIRE(cudaGraphNodeGetDependencies(node, nullptr, nullptr, &n) == cudaSuccess);
  std::vector<cudaGraphNode_t> deps(n);
  REQUIRE(cudaGraphNodeGetDependencies(node, deps.data(), nullptr, &n) == cudaSuccess);
  return deps;
}

// Ends the capture on `s` expecting `want`; a failed end returns no graph.
cudaGraph_t End(cudaStream_t s, cudaError_t want = cudaSuccess) {
  cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(0x1);
  CHECK(cudaStreamEndCapture(s, &graph) == want);
  cudaGetLastError();
  if (want != cudaSuccess) CHECK(graph == nullptr);
  return want == cudaSuccess ? graph : nullptr;
}

}  // namespace

TEST_CASE("captured work is recorded, not run, and every launch runs it again", "[capture]") {
  cudaStream_t s = NonBlocking();
  char src[8] = "abcdefg", dst[8] = {};
  std::atomic<int> calls{0};
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(StatusOf(s) == cudaStreamCaptureStatusActive);
  REQUIRE(cudaMemsetAsync(dst, 'z', sizeof(dst), s) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(dst, src, 4, cudaMemcpyDefault, s) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(s, Count, &calls) == cudaSuccess);
  cudaGraph_t graph = End(s);
  REQUIRE(graph != nullptr);
  CHECK(StatusOf(s) == cudaStreamCaptureStatusNone);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(calls.load() == 0);
  CHECK(dst[0] == 0);

  // One node per item, chained in stream order.
  const auto nodes = NodesOf(graph);
  REQUIRE(nodes.size() == 3);
  CHECK(TypeOf(nodes[0]) == cudaGraphNodeTypeMemset);
  CHECK(TypeOf(nodes[1]) == cudaGraphNodeTypeMemcpy);
  CHECK(TypeOf(nodes[2]) == cudaGraphNodeTypeHost);
  CHECK(DependenciesOf(nodes[0]).empty());
  CHECK(DependenciesOf(nodes[2]) == std::vector<cudaGraphNode_t>{nodes[1]});
  cudaHostNodeParams host{};
  REQUIRE(cudaGraphHostNodeGetParams(nodes[2], &host) == cudaSuccess);
  CHECK(host.fn == Count);
  CHECK(host.userData == &calls);

  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch) == cudaSuccess);
  // The executable graph is a snapshot: the graph may go first, as torch destroys it.
  REQUIRE(cudaGraphDestroy(graph) == cudaSuccess);
  for (int launch = 1; launch <= 3; ++launch) {
    src[0] = static_cast<char>('0' + launch);
    REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(calls.load() == launch);
    CHECK(std::string(dst, 8) == std::string(1, static_cast<char>('0' + launch)) + "bcdzzzz");
  }
  unsigned long long flags = 0;
  REQUIRE(cudaGraphExecGetFlags(exec, &flags) == cudaSuccess);
  CHECK(flags == cudaGraphInstantiateFlagAutoFreeOnLaunch);
  CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(cudaGraphExecDestroy(exec) == cudaErrorInvalidValue);
  cudaGetLastError();
  cudaStreamDestroy(s);
}

TEST_CASE("capture info: status, id, graph and the dependency set", "[capture]") {
  cudaStream_t s = NonBlocking();
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  size_t count = 99;
  REQUIRE(cudaStreamGetCaptureInfo(s, &status, &id, &graph, &deps, &edges, &count) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusActive);
  CHECK(id != 0);
  CHECK(graph != nullptr);
  CHECK(count == 0);
  REQUIRE(cudaLaunchKernel(reinterpret_cast<const void*>(&Count), dim3(1), dim3(1), nullptr, 0, s) == cudaSuccess);
  REQUIRE(cudaStreamGetCaptureInfo(s, &status, nullptr, nullptr, &deps, &edges, &count) == cudaSuccess);
  REQUIRE(count == 1);
  CHECK(TypeOf(deps[0]) == cudaGraphNodeTypeKernel);
  CHECK(edges[0].type == cudaGraphDependencyTypeDefault);
  const cudaGraphNode_t kernel = deps[0];
  // Edge data needs the dependencies too.
  CHECK(cudaStreamGetCaptureInfo(s, &status, nullptr, nullptr, nullptr, &edges, nullptr) == cudaErrorInvalidValue);
  CHECK(cudaStreamGetCaptureInfo(s, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) == cudaErrorInvalidValue);
  cudaGetLastError();

  // Setting an empty dependency set makes the next node a root.
  REQUIRE(cudaStreamUpdateCaptureDependencies(s, nullptr, nullptr, 0, cudaStreamSetCaptureDependencies) ==
          cudaSuccess);
  REQUIRE(cudaLaunchKernel(reinterpret_cast<const void*>(&Count), dim3(1), dim3(1), nullptr, 0, s) == cudaSuccess);
  REQUIRE(cudaStreamGetCaptureInfo(s, &status, nullptr, nullptr, &deps, nullptr, &count) == cudaSuccess);
  const cudaGraphNode_t root = deps[0];
  CHECK(DependenciesOf(root).empty());
  // Flags 0 adds, as cudaStreamAddCaptureDependencies does.
  cudaGraphNode_t both[] = {kernel};
  REQUIRE(cudaStreamUpdateCaptureDependencies(s, both, nullptr, 1, 0) == cudaSuccess);
  REQUIRE(cudaStreamGetCaptureInfo(s, &status, nullptr, nullptr, &deps, nullptr, &count) == cudaSuccess);
  CHECK(count == 2);
  CHECK(cudaStreamUpdateCaptureDependencies(s, both, nullptr, 1, 7) == cudaErrorInvalidValue);
  cudaGetLastError();

  cudaGraph_t ended = End(s);
  CHECK(ended == graph);
  CHECK(NodesOf(ended).size() == 2);
  // Outside a capture, only the status is valid, and it is None.
  id = 123;
  REQUIRE(cudaStreamGetCaptureInfo(s, &status, &id, nullptr, nullptr, nullptr, nullptr) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusNone);
  CHECK(cudaStreamUpdateCaptureDependencies(s, nullptr, nullptr, 0, 0) == cudaErrorIllegalState);
  cudaGetLastError();
  cudaGraphDestroy(ended);
  cudaStreamDestroy(s);
}

TEST_CASE("synchronising or querying a capturing stream fails and invalidates the capture", "[capture]") {
  cudaStream_t s = NonBlocking();
  auto sync = GENERATE(0, 1);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(nullptr, 0, 0, s) == cudaSuccess);
  CHECK((sync ? cudaStreamSynchronize(s) : cudaStreamQuery(s)) == cudaErrorStreamCaptureUnsupported);
  CHECK(cudaGetLastError() == cudaErrorStreamCaptureUnsupported);
  CHECK(StatusOf(s) == cudaStreamCaptureStatusInvalidated);
  // Work on an invalidated capture fails until it is ended, which returns no graph.
  CHECK(cudaLaunchHostFunc(s, SetFlag, nullptr) == cudaErrorStreamCaptureInvalidated);
  cudaGetLastError();
  End(s, cudaErrorStreamCaptureInvalidated);
  CHECK(StatusOf(s) == cudaStreamCaptureStatusNone);
  CHECK(cudaStreamSynchronize(s) == cudaSuccess);
  cudaStreamDestroy(s);
}

TEST_CASE("capture modes decide which threads may make unsafe calls", "[capture]") {
  cudaStream_t s = NonBlocking();
  void* p = nullptr;
  // Each case: the mode the capture begins in, the other thread's mode, whether its
  // cudaMalloc is refused (invalidating the capture).
  struct Case {
    cudaStreamCaptureMode capture, other;
    bool refused;
  };
  const Case c = GENERATE(Case{cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal, true},
                          Case{cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, false},
                          Case{cudaStreamCaptureModeGlobal, cudaStreamCaptureModeRelaxed, false},
                          Case{cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeGlobal, false},
                          Case{cudaStreamCaptureModeRelaxed, cudaStreamCaptureModeGlobal, false});
  INFO("capture mode " << c.capture << ", other thread's mode " << c.other);
  REQUIRE(cudaStreamBeginCapture(s, c.capture) == cudaSuccess);
  cudaError_t other_malloc = cudaErrorUnknown;
  std::thread([&] {
    cudaStreamCaptureMode mode = c.other;
    cudaThreadExchangeStreamCaptureMode(&mode);
    other_malloc = cudaMalloc(&p, 64);
    if (other_malloc == cudaSuccess) cudaFree(p);
    cudaGetLastError();
  }).join();
  CHECK(other_malloc == (c.refused ? cudaErrorStreamCaptureUnsupported : cudaSuccess));
  CHECK(StatusOf(s) == (c.refused ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive));
  cudaGraphDestroy(End(s, c.refused ? cudaErrorStreamCaptureInvalidated : cudaSuccess));
  cudaStreamDestroy(s);
}

TEST_CASE("the capturing thread's own unsafe calls depend on the capture's mode and its own", "[capture]") {
  cudaStream_t s = NonBlocking();
  void* p = nullptr;
  // Thread-local and global captures forbid this thread's unsafe calls...
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  CHECK(cudaMalloc(&p, 64) == cudaErrorStreamCaptureUnsupported);
  CHECK(cudaDeviceSynchronize() == cudaErrorStreamCaptureUnsupported);
  cudaGetLastError();
  End(s, cudaErrorStreamCaptureInvalidated);
  // ...unless the thread switched itself to relaxed (torch's allocator does, around cudaMalloc).
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  REQUIRE(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess);
  CHECK(mode == cudaStreamCaptureModeGlobal);
  CHECK(cudaMalloc(&p, 64) == cudaSuccess);
  cudaThreadExchangeStreamCaptureMode(&mode);
  CHECK(mode == cudaStreamCaptureModeRelaxed);
  cudaGraphDestroy(End(s));
  CHECK(cudaFree(p) == cudaSuccess);
  // A relaxed capture forbids nothing.
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  CHECK(cudaMalloc(&p, 64) == cudaSuccess);
  CHECK(cudaFree(p) == cudaSuccess);
  cudaGraphDestroy(End(s));
  mode = static_cast<cudaStreamCaptureMode>(7);
  CHECK(cudaThreadExchangeStreamCaptureMode(&mode) == cudaErrorInvalidValue);
  cudaGetLastError();
  cudaStreamDestroy(s);
}

TEST_CASE("the legacy stream is unusable while a blocking stream of its device captures", "[capture]") {
  cudaStream_t blocking = nullptr;
  REQUIRE(cudaStreamCreate(&blocking) == cudaSuccess);
  cudaStream_t non_blocking = NonBlocking();
  char byte = 0;
  // A non-blocking capture leaves the legacy stream alone.
  REQUIRE(cudaStreamBeginCapture(non_blocking, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  CHECK(StatusOf(nullptr) == cudaStreamCaptureStatusNone);
  CHECK(cudaMemsetAsync(&byte, 1, 1, nullptr) == cudaSuccess);
  cudaGraphDestroy(End(non_blocking));

  REQUIRE(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  cudaStreamCaptureStatus status;
  // Asking is refused but harmless, whatever the thread's mode...
  CHECK(cudaStreamIsCapturing(nullptr, &status) == cudaErrorStreamCaptureImplicit);
  CHECK(cudaGetLastError() == cudaErrorStreamCaptureImplicit);
  CHECK(StatusOf(blocking) == cudaStreamCaptureStatusActive);
  // ...work on it or waiting for it invalidates the capture.
  CHECK(cudaMemsetAsync(&byte, 2, 1, nullptr) == cudaErrorStreamCaptureImplicit);
  cudaGetLastError();
  CHECK(StatusOf(blocking) == cudaStreamCaptureStatusInvalidated);
  End(blocking, cudaErrorStreamCaptureInvalidated);
  CHECK(cudaStreamSynchronize(nullptr) == cudaSuccess);
  CHECK(byte == 1);
  CHECK(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported);
  cudaGetLastError();
  cudaStreamDestroy(blocking);
  cudaStreamDestroy(non_blocking);
}

TEST_CASE("a stream joins a capture by waiting on its event, and must be joined back", "[capture]") {
  cudaStream_t origin = NonBlocking(), side = NonBlocking();
  cudaEvent_t fork, join;
  REQUIRE(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(cudaEventCreateWithFlags(&join, cudaEventDisableTiming) == cudaSuccess);
  const bool rejoin = GENERATE(true, false);
  REQUIRE(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(nullptr, 0, 0, origin) == cudaSuccess);
  REQUIRE(cudaEventRecord(fork, origin) == cudaSuccess);
  // An event recorded in a capture is no point of any stream: asking about it is refused.
  CHECK(cudaEventQuery(fork) == cudaErrorCapturedEvent);
  cudaGetLastError();
  CHECK(StatusOf(origin) == cudaStreamCaptureStatusInvalidated);
  End(origin, cudaErrorStreamCaptureInvalidated);

  REQUIRE(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(nullptr, 0, 0, origin) == cudaSuccess);
  REQUIRE(cudaEventRecord(fork, origin) == cudaSuccess);
  REQUIRE(cudaStreamWaitEvent(side, fork, 0) == cudaSuccess);
  unsigned long long origin_id = 0, side_id = 0;
  cudaStreamCaptureStatus status;
  REQUIRE(cudaStreamGetCaptureInfo(origin, &status, &origin_id) == cudaSuccess);
  REQUIRE(cudaStreamGetCaptureInfo(side, &status, &side_id) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusActive);
  CHECK(side_id == origin_id);
  REQUIRE(cudaLaunchHostFunc(side, SetFlag, nullptr) == cudaSuccess);  // after the fork point
  REQUIRE(cudaMemsetAsync(nullptr, 0, 0, origin) == cudaSuccess);       // concurrent with it
  // Only the origin ends a capture.
  cudaGraph_t none = nullptr;
  CHECK(cudaStreamEndCapture(side, &none) == cudaErrorStreamCaptureUnmatched);
  cudaGetLastError();
  CHECK(StatusOf(origin) == cudaStreamCaptureStatusInvalidated);
  End(origin, cudaErrorStreamCaptureInvalidated);
  CHECK(StatusOf(side) == cudaStreamCaptureStatusNone);

  // Again, ended properly.
  REQUIRE(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(nullptr, 0, 0, origin) == cudaSuccess);
  REQUIRE(cudaEventRecord(fork, origin) == cudaSuccess);
  REQUIRE(cudaStreamWaitEvent(side, fork, 0) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(side, SetFlag, nullptr) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(nullptr, 0, 0, origin) == cudaSuccess);
  if (rejoin) {
    REQUIRE(cudaEventRecord(join, side) == cudaSuccess);
    REQUIRE(cudaStreamWaitEvent(origin, join, 0) == cudaSuccess);
    REQUIRE(cudaMemsetAsync(nullptr, 0, 0, origin) == cudaSuccess);  // after both branches
  }
  cudaGraph_t graph = End(origin, rejoin ? cudaSuccess : cudaErrorStreamCaptureUnjoined);
  CHECK(StatusOf(side) == cudaStreamCaptureStatusNone);  // the capture ended for every stream
  if (rejoin) {
    const auto nodes = NodesOf(graph);
    REQUIRE(nodes.size() == 4);  // memset, host (side), memset (origin), memset (the join)
    CHECK(DependenciesOf(nodes[1]) == std::vector<cudaGraphNode_t>{nodes[0]});
    CHECK(DependenciesOf(nodes[2]) == std::vector<cudaGraphNode_t>{nodes[0]});
    CHECK(DependenciesOf(nodes[3]).size() == 2);
    size_t roots = 0, edges = 0;
    REQUIRE(cudaGraphGetRootNodes(graph, nullptr, &roots) == cudaSuccess);
    REQUIRE(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges) == cudaSuccess);
    CHECK(roots == 1);
    CHECK(edges == 4);
    cudaGraphDestroy(graph);
  }
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  cudaStreamDestroy(origin);
  cudaStreamDestroy(side);
}

TEST_CASE("waits that would cross a capture's boundary are refused", "[capture]") {
  cudaStream_t a = NonBlocking(), b = NonBlocking();
  cudaEvent_t outside, inside;
  REQUIRE(cudaEventCreate(&outside) == cudaSuccess);
  REQUIRE(cudaEventCreate(&inside) == cudaSuccess);
  REQUIRE(cudaEventRecord(outside, b) == cudaSuccess);
  // An event recorded outside: isolation, unless the wait is external (an event wait node).
  REQUIRE(cudaStreamBeginCapture(a, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  CHECK(cudaStreamWaitEvent(a, outside, cudaEventWaitExternal) == cudaSuccess);
  CHECK(cudaEventRecordWithFlags(inside, a, cudaEventRecordExternal) == cudaSuccess);
  cudaGraph_t graph = End(a);
  const auto nodes = NodesOf(graph);
  REQUIRE(nodes.size() == 2);
  CHECK(TypeOf(nodes[0]) == cudaGraphNodeTypeWaitEvent);
  CHECK(TypeOf(nodes[1]) == cudaGraphNodeTypeEventRecord);
  // The record node records the event when the graph runs.
  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, a) == cudaSuccess);
  CHECK(cudaEventSynchronize(inside) == cudaSuccess);
  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, outside, inside) == cudaSuccess);
  CHECK(ms >= 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);

  REQUIRE(cudaStreamBeginCapture(a, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  CHECK(cudaStreamWaitEvent(a, outside, 0) == cudaErrorStreamCaptureIsolation);
  cudaGetLastError();
  End(a, cudaErrorStreamCaptureInvalidated);
  // Two captures may not merge.
  REQUIRE(cudaStreamBeginCapture(a, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(b, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  REQUIRE(cudaEventRecord(inside, a) == cudaSuccess);
  CHECK(cudaStreamWaitEvent(b, inside, 0) == cudaErrorStreamCaptureMerge);
  cudaGetLastError();
  End(a, cudaErrorStreamCaptureInvalidated);
  End(b, cudaErrorStreamCaptureInvalidated);
  cudaEventDestroy(outside);
  cudaEventDestroy(inside);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
}

TEST_CASE("begin and end: the rules on streams, threads and modes", "[capture]") {
  cudaStream_t s = NonBlocking();
  CHECK(cudaStreamBeginCapture(s, static_cast<cudaStreamCaptureMode>(9)) == cudaErrorInvalidValue);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(s, &graph) == cudaErrorIllegalState);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaErrorIllegalState);
  // A global or thread-local capture ends on the thread that began it.
  cudaError_t elsewhere = cudaSuccess;
  std::thread([&] {
    elsewhere = cudaStreamEndCapture(s, &graph);
    cudaGetLastError();
  }).join();
  CHECK(elsewhere == cudaErrorStreamCaptureWrongThread);
  CHECK(StatusOf(s) == cudaStreamCaptureStatusActive);
  cudaGraphDestroy(End(s));
  // A relaxed one may end anywhere.
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  std::thread([&] { elsewhere = cudaStreamEndCapture(s, &graph); }).join();
  CHECK(elsewhere == cudaSuccess);
  cudaGraphDestroy(graph);
  cudaGetLastError();
  cudaStreamDestroy(s);
}

TEST_CASE("per-thread default stream captures through the _ptsz entry points", "[capture]") {
  std::atomic<int> calls{0};
  REQUIRE(cudaStreamBeginCapture_ptsz(nullptr, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  REQUIRE(cudaStreamIsCapturing_ptsz(nullptr, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusActive);
  REQUIRE(cudaStreamIsCapturing(cudaStreamPerThread, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusActive);
  REQUIRE(cudaLaunchHostFunc_ptsz(nullptr, Count, &calls) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture_ptsz(nullptr, &graph) == cudaSuccess);
  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphLaunch_ptsz(exec, nullptr) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize_ptsz(nullptr) == cudaSuccess);
  CHECK(calls.load() == 1);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_CASE("what the sim does not capture is refused and invalidates the capture", "[capture]") {
  cudaStream_t s = NonBlocking();
  cudaGraph_t empty;
  REQUIRE(cudaGraphCreate(&empty, 0) == cudaSuccess);
  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, empty, 0) == cudaSuccess);
  void* p = nullptr;
  const int what = GENERATE(0, 1);
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess);
  if (what == 0) {
    CHECK(cudaGraphLaunch(exec, s) == cudaErrorStreamCaptureUnsupported);
  } else {
    CHECK(cudaMallocAsync(&p, 256, s) == cudaErrorStreamCaptureUnsupported);  // no memory nodes
  }
  cudaGetLastError();
  End(s, cudaErrorStreamCaptureInvalidated);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(empty);
  cudaStreamDestroy(s);
}

TEST_CASE("capture into an existing graph, after given nodes", "[capture]") {
  cudaStream_t s = NonBlocking();
  cudaGraph_t graph;
  REQUIRE(cudaGraphCreate(&graph, 0) == cudaSuccess);
  cudaGraphNode_t first;
  REQUIRE(cudaGraphAddEmptyNode(&first, graph, nullptr, 0) == cudaSuccess);
  REQUIRE(cudaStreamBeginCaptureToGraph(s, graph, &first, nullptr, 1, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(s, SetFlag, nullptr) == cudaSuccess);
  // A graph a capture records into cannot be destroyed meanwhile.
  CHECK(cudaGraphDestroy(graph) == cudaErrorIllegalState);
  cudaGetLastError();
  cudaGraph_t ended = End(s);
  CHECK(ended == graph);
  const auto nodes = NodesOf(graph);
  REQUIRE(nodes.size() == 2);
  CHECK(DependenciesOf(nodes[1]) == std::vector<cudaGraphNode_t>{first});
  // The capture's dependencies must be nodes of that graph.
  cudaGraph_t other;
  REQUIRE(cudaGraphCreate(&other, 0) == cudaSuccess);
  CHECK(cudaStreamBeginCaptureToGraph(s, other, &first, nullptr, 1, cudaStreamCaptureModeGlobal) ==
        cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(StatusOf(s) == cudaStreamCaptureStatusNone);
  cudaGraphDestroy(other);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

TEST_CASE("destroying a capture's origin stream ends the capture", "[capture]") {
  cudaStream_t s = NonBlocking();
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  // Nothing is left forbidding this thread's unsafe calls.
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 64) == cudaSuccess);
  CHECK(cudaFree(p) == cudaSuccess);
}
