// The sim's CUDA graphs: nodes with dependencies and nothing to run. A capture adds one node per
// captured item (kernels, copies, host functions...), each depending on the previous one, as a
// single stream orders them; cudaGraphAddNode adds nodes with explicit dependencies. Launching a
// graph replays nothing (api_capture.cc). Graphs also hold references to user objects.
#ifndef NCCLWATCH_SIM_CUDART_GRAPH_H_
#define NCCLWATCH_SIM_CUDART_GRAPH_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace ncclsim {

struct GraphNode {
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  std::vector<cudaGraphNode_t> dependencies;
};

// cudaUserObjectCreate: calls destroy(ptr) when the last reference goes.
class UserObject {
 public:
  static cudaUserObject_t Create(void* ptr, cudaHostFn_t destroy, unsigned references);
  static UserObject* Lookup(cudaUserObject_t handle);
  void Retain(unsigned count) { references_ += count; }
  // Drops `count` references; the last one runs the destructor and frees the object.
  void Release(unsigned count);

 private:
  UserObject(void* ptr, cudaHostFn_t destroy, unsigned references)
      : ptr_(ptr), destroy_(destroy), references_(references) {}
  void* const ptr_;
  const cudaHostFn_t destroy_;
  std::atomic<unsigned> references_;
};

class Graph {
 public:
  static cudaGraph_t Create();
  static Graph* Lookup(cudaGraph_t handle);
  // False if `handle` is not a live graph. Releases the graph's user-object references.
  static bool Destroy(cudaGraph_t handle);
  // Whether `node` is a live node of any graph.
  static GraphNode* LookupNode(cudaGraphNode_t node);

  // Adds a node after `dependencies` (all nodes of this graph, else null is returned).
  cudaGraphNode_t AddNode(cudaGraphNodeType type, const cudaGraphNode_t* dependencies, size_t count);
  // Adds `count` captured nodes in a chain, the first one after `dependencies`.
  void AppendCaptured(size_t count, std::vector<cudaGraphNode_t> dependencies);
  size_t node_count() const;
  std::vector<cudaGraphNode_t> Nodes() const;
  // Keeps `count` references to `object` until the graph is destroyed; with `move` they are the
  // caller's, otherwise new ones.
  void KeepUserObject(UserObject* object, unsigned count, bool move);

 private:
  Graph() = default;
  ~Graph();
  bool OwnsLocked(cudaGraphNode_t node) const;

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<GraphNode>> nodes_;
  std::vector<std::pair<UserObject*, unsigned>> user_objects_;
};

// cudaStreamBeginCaptureToGraph: the capture on `stream` (a Stream*) ends in `graph`, its first
// node after `dependencies`. Take returns false for a capture begun by cudaStreamBeginCapture.
void SetCaptureTarget(const void* stream, cudaGraph_t graph, std::vector<cudaGraphNode_t> dependencies);
bool TakeCaptureTarget(const void* stream, cudaGraph_t* graph, std::vector<cudaGraphNode_t>* dependencies);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_GRAPH_H_
