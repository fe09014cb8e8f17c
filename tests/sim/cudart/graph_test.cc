// Graphs built node by node, executable graphs (instantiate, launch, upload, update, destroy)
// and user objects (sim/cudart/graph.h, api_graph.cc, api_graph_exec.cc).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

namespace {

using ncclsim_test::Gate;

// Appends its tag to a log, so a test sees the order host nodes ran in.
struct Tagged {
  std::mutex* mu;
  std::vector<int>* log;
  int tag;
};
void Append(void* arg) {
  auto* t = static_cast<Tagged*>(arg);
  std::lock_guard<std::mutex> lock(*t->mu);
  t->log->push_back(t->tag);
}

void Destroyed(void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); }

cudaGraphNode_t HostNode(cudaGraph_t graph, std::vector<cudaGraphNode_t> deps, cudaHostFn_t fn, void* arg) {
  cudaGraphNode_t node = nullptr;
  const cudaHostNodeParams params{fn, arg};
  REQUIRE(cudaGraphAddHostNode(&node, graph, deps.data(), deps.size(), &params) == cudaSuccess);
  return node;
}

}  // namespace

TEST_CASE("a graph built node by node runs in dependency order, child graphs included", "[graph]") {
  std::mutex mu;
  std::vector<int> log;
  Tagged t1{&mu, &log, 1}, t2{&mu, &log, 2}, t3{&mu, &log, 3}, t4{&mu, &log, 4};
  char src[16] = "0123456789abcde", dst[16] = {};
  cudaGraph_t child, graph;
  REQUIRE(cudaGraphCreate(&child, 0) == cudaSuccess);
  REQUIRE(cudaGraphCreate(&graph, 0) == cudaSuccess);
  CHECK(cudaGraphCreate(&graph, 1) == cudaErrorInvalidValue);  // flags must be 0
  cudaGetLastError();
  HostNode(child, {}, Append, &t3);

  // memset -> memcpy -> host(1); host(2) is a root; child graph after both hosts; host(4) last.
  cudaGraphNode_t set, copy, child_node, last;
  const cudaMemsetParams set_params{dst, 0, 0x2a, 1, sizeof(dst), 1};
  REQUIRE(cudaGraphAddMemsetNode(&set, graph, nullptr, 0, &set_params) == cudaSuccess);
  REQUIRE(cudaGraphAddMemcpyNode1D(&copy, graph, &set, 1, dst, src, 4, cudaMemcpyDefault) == cudaSuccess);
  cudaGraphNode_t h1 = HostNode(graph, {copy}, Append, &t1);
  cudaGraphNode_t h2 = HostNode(graph, {}, Append, &t2);
  cudaGraphNode_t hosts[] = {h1, h2};
  REQUIRE(cudaGraphAddChildGraphNode(&child_node, graph, hosts, 2, child) == cudaSuccess);
  REQUIRE(cudaGraphAddEmptyNode(&last, graph, &child_node, 1) == cudaSuccess);
  HostNode(graph, {last}, Append, &t4);
  // The child was cloned: changing the original afterwards changes nothing.
  HostNode(child, {}, Append, &t4);
  cudaGraph_t owned = nullptr;
  REQUIRE(cudaGraphChildGraphNodeGetGraph(child_node, &owned) == cudaSuccess);
  CHECK(owned != child);

  // A node of another graph is no dependency.
  cudaGraphNode_t foreign = nullptr;
  CHECK(cudaGraphAddEmptyNode(&foreign, child, &set, 1) == cudaErrorInvalidValue);
  cudaGetLastError();
  size_t count = 0;
  REQUIRE(cudaGraphGetRootNodes(graph, nullptr, &count) == cudaSuccess);
  CHECK(count == 2);
  REQUIRE(cudaGraphNodeGetDependentNodes(set, nullptr, nullptr, &count) == cudaSuccess);
  CHECK(count == 1);

  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  cudaStream_t s;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(std::string(dst, 6) == "0123**");
  // Ready nodes in creation order: host 1 (after the copy), host 2, then the child's, then 4.
  CHECK(log == std::vector<int>{1, 2, 3, 4});

  // A cycle cannot be instantiated.
  cudaGraphNode_t back[] = {last}, front[] = {set};
  REQUIRE(cudaGraphAddDependencies(graph, back, front, nullptr, 1) == cudaSuccess);
  CHECK(cudaGraphAddDependencies(graph, back, front, nullptr, 1) == cudaErrorInvalidValue);  // exists
  cudaGraphExec_t cyclic = nullptr;
  CHECK(cudaGraphInstantiate(&cyclic, graph, 0) == cudaErrorInvalidValue);
  cudaGetLastError();

  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaGraphDestroy(child);
  cudaStreamDestroy(s);
}

TEST_CASE("launches of one executable graph run one after another, on any stream", "[graph]") {
  std::mutex mu;
  std::vector<int> log;
  Tagged second{&mu, &log, 2};
  Gate gate;
  cudaStream_t a, b;
  REQUIRE(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking) == cudaSuccess);
  cudaGraph_t graph;
  REQUIRE(cudaGraphCreate(&graph, 0) == cudaSuccess);
  std::atomic<int> which{0};
  HostNode(graph, {}, [](void* w) { static_cast<std::atomic<int>*>(w)->fetch_add(1); }, &which);
  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);

  REQUIRE(cudaLaunchHostFunc(a, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, a) == cudaSuccess);        // held behind the gate on a
  REQUIRE(cudaGraphLaunch(exec, b) == cudaSuccess);        // waits for the launch on a
  REQUIRE(cudaLaunchHostFunc(b, Append, &second) == cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(which.load() == 0);
  CHECK(cudaStreamQuery(b) == cudaErrorNotReady);
  cudaGetLastError();
  // Destroying it with launches in flight is allowed: they finish.
  CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
  gate.Open();
  REQUIRE(cudaStreamSynchronize(b) == cudaSuccess);
  CHECK(which.load() == 2);
  CHECK(log == std::vector<int>{2});
  cudaGraphDestroy(graph);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
}

TEST_CASE("an executable graph takes a graph of the same shape in an update", "[graph]") {
  std::mutex mu;
  std::vector<int> log;
  Tagged one{&mu, &log, 1}, two{&mu, &log, 2};
  cudaGraph_t g1, g2, g3, g4;
  for (cudaGraph_t* g : {&g1, &g2, &g3, &g4}) REQUIRE(cudaGraphCreate(g, 0) == cudaSuccess);
  HostNode(g1, {HostNode(g1, {}, Append, &one)}, Append, &one);
  HostNode(g2, {HostNode(g2, {}, Append, &two)}, Append, &two);  // the same shape
  const cudaGraphNode_t g3_first = HostNode(g3, {}, Append, &two);
  cudaGraphNode_t g3_second;  // another type in second place
  REQUIRE(cudaGraphAddEmptyNode(&g3_second, g3, &g3_first, 1) == cudaSuccess);
  HostNode(g4, {}, Append, &two);  // the same types without the edge
  HostNode(g4, {}, Append, &two);
  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, g1, 0) == cudaSuccess);
  cudaGraphExecUpdateResultInfo info{};
  REQUIRE(cudaGraphExecUpdate(exec, g2, &info) == cudaSuccess);
  CHECK(info.result == cudaGraphExecUpdateSuccess);
  CHECK(cudaGraphExecUpdate(exec, g3, &info) == cudaErrorGraphExecUpdateFailure);
  CHECK(info.result == cudaGraphExecUpdateErrorNodeTypeChanged);
  CHECK(info.errorNode == g3_second);
  CHECK(cudaGraphExecUpdate(exec, g4, &info) == cudaErrorGraphExecUpdateFailure);
  CHECK(info.result == cudaGraphExecUpdateErrorTopologyChanged);
  CHECK(cudaGraphExecUpdate(exec, g2, nullptr) == cudaErrorInvalidValue);
  cudaGetLastError();
  REQUIRE(cudaGraphLaunch(exec, cudaStreamPerThread) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(cudaStreamPerThread) == cudaSuccess);
  CHECK(log == std::vector<int>{2, 2});
  cudaGraphExecDestroy(exec);
  for (cudaGraph_t g : {g1, g2, g3, g4}) cudaGraphDestroy(g);
}

TEST_CASE("instantiation flags, parameters and upload", "[graph]") {
  cudaGraph_t graph;
  REQUIRE(cudaGraphCreate(&graph, 0) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 1ull << 20) == cudaErrorInvalidValue);
  // Upload at instantiation needs the stream only the params form carries.
  CHECK(cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagUpload) == cudaErrorInvalidValue);
  cudaGetLastError();
  cudaStream_t s;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  cudaGraphInstantiateParams params{};
  params.flags = cudaGraphInstantiateFlagUpload | cudaGraphInstantiateFlagUseNodePriority;
  params.uploadStream = s;
  params.result_out = cudaGraphInstantiateError;
  REQUIRE(cudaGraphInstantiateWithParams(&exec, graph, &params) == cudaSuccess);
  CHECK(params.result_out == cudaGraphInstantiateSuccess);
  CHECK(cudaGraphUpload(exec, s) == cudaSuccess);
  CHECK(cudaGraphLaunch(exec, s) == cudaSuccess);  // an empty graph still takes its place
  CHECK(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(cudaGraphLaunch(nullptr, s) == cudaErrorInvalidValue);
  cudaGetLastError();
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

TEST_CASE("user objects live as long as a graph or an executable graph holds them", "[graph]") {
  std::atomic<bool> destroyed{false};
  cudaUserObject_t object;
  REQUIRE(cudaUserObjectCreate(&object, &destroyed, Destroyed, 1, cudaUserObjectNoDestructorSync) == cudaSuccess);
  cudaGraph_t graph;
  REQUIRE(cudaGraphCreate(&graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove) == cudaSuccess);
  cudaGraph_t clone;
  REQUIRE(cudaGraphClone(&clone, graph) == cudaSuccess);
  cudaGraphExec_t exec;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphDestroy(graph) == cudaSuccess);
  REQUIRE(cudaGraphDestroy(clone) == cudaSuccess);
  CHECK_FALSE(destroyed.load());
  REQUIRE(cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(destroyed.load());

  // Released from the graph explicitly.
  destroyed = false;
  REQUIRE(cudaUserObjectCreate(&object, &destroyed, Destroyed, 1, cudaUserObjectNoDestructorSync) == cudaSuccess);
  REQUIRE(cudaGraphCreate(&graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphRetainUserObject(graph, object, 2, 0) == cudaSuccess);
  CHECK(cudaGraphReleaseUserObject(graph, object, 3) == cudaErrorInvalidValue);  // holds 2
  cudaGetLastError();
  REQUIRE(cudaGraphReleaseUserObject(graph, object, 2) == cudaSuccess);
  REQUIRE(cudaUserObjectRetain(object, 1) == cudaSuccess);
  REQUIRE(cudaUserObjectRelease(object, 1) == cudaSuccess);
  CHECK_FALSE(destroyed.load());
  REQUIRE(cudaUserObjectRelease(object, 1) == cudaSuccess);
  CHECK(destroyed.load());
  cudaGraphDestroy(graph);
}

TEST_CASE("cudaGraphDebugDotPrint writes the nodes and edges", "[graph]") {
  cudaGraph_t graph;
  REQUIRE(cudaGraphCreate(&graph, 0) == cudaSuccess);
  cudaGraphNode_t a, b;
  REQUIRE(cudaGraphAddEmptyNode(&a, graph, nullptr, 0) == cudaSuccess);
  REQUIRE(cudaGraphAddEmptyNode(&b, graph, &a, 1) == cudaSuccess);
  char path[] = "/tmp/ncclsim-graph-dot-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  REQUIRE(cudaGraphDebugDotPrint(graph, path, 0) == cudaSuccess);
  std::FILE* f = std::fopen(path, "r");
  REQUIRE(f != nullptr);
  char text[512] = {};
  const size_t n = std::fread(text, 1, sizeof(text) - 1, f);
  std::fclose(f);
  unlink(path);
  const std::string dot(text, n);
  CHECK(dot.find("digraph") == 0);
  CHECK(dot.find("n0 -> n1") != std::string::npos);
  cudaGraphDestroy(graph);
}
