// The sim's CUDA graphs. A graph holds nodes with dependencies; each node carries what it does
// when the graph runs: a copy or a set moves bytes, a host node calls its function, an event
// record node records its event, an event wait node waits for it, a child graph node runs its
// graph, and kernels and empty nodes do nothing (device code never runs in the sim).
//
// Nodes come from stream capture (capture.h) or from the cudaGraphAdd*Node calls. An executable
// graph (GraphExec) is a snapshot: its steps in dependency order, child graphs flattened, so the
// graph may be changed or destroyed after instantiation, as in CUDA. Launching one
// (api_graph_exec.cc) puts the steps on the launch stream in that order.
#ifndef NCCLWATCH_SIM_CUDART_GRAPH_H_
#define NCCLWATCH_SIM_CUDART_GRAPH_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "stream.h"

namespace ncclsim {

class Graph;

// What a node does, independent of where it sits in a graph.
struct NodeAction {
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  std::function<void()> work;    // copies and sets: the bytes they move; host nodes: the call
  cudaHostNodeParams host{};     // host nodes: function and argument as given
  cudaEvent_t event = nullptr;   // event record and event wait nodes
  cudaGraph_t child = nullptr;   // child graph nodes: the node's own graph (a clone it owns)
};

inline NodeAction MakeAction(cudaGraphNodeType type, std::function<void()> work = {}) {
  NodeAction action;
  action.type = type;
  action.work = std::move(work);
  return action;
}

inline NodeAction HostAction(cudaHostFn_t fn, void* data) {
  NodeAction action = MakeAction(cudaGraphNodeTypeHost, [fn, data] { fn(data); });
  action.host = cudaHostNodeParams{fn, data};
  return action;
}

struct GraphNode {
  NodeAction action;
  Graph* owner = nullptr;
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

// References to user objects: (object, count) pairs, released when the holder goes.
using UserObjectRefs = std::vector<std::pair<UserObject*, unsigned>>;

class Graph {
 public:
  static cudaGraph_t Create();
  static Graph* Lookup(cudaGraph_t handle);
  // False if `handle` is not a live graph. Releases the graph's user-object references and
  // destroys the graphs its child nodes own.
  static bool Destroy(cudaGraph_t handle);
  // The node behind `node` if it is a live node of any graph.
  static GraphNode* LookupNode(cudaGraphNode_t node);

  cudaGraph_t handle() { return reinterpret_cast<cudaGraph_t>(this); }
  // Adds a node after `dependencies`; null if one of them is not a node of this graph.
  cudaGraphNode_t Add(NodeAction action, const cudaGraphNode_t* dependencies, size_t count);
  bool Owns(cudaGraphNode_t node) const;
  std::vector<cudaGraphNode_t> Nodes() const;
  std::vector<cudaGraphNode_t> RootNodes() const;
  std::vector<cudaGraphNode_t> Dependencies(cudaGraphNode_t node) const;
  std::vector<cudaGraphNode_t> Dependents(cudaGraphNode_t node) const;
  // Every edge as (from, to), in node order.
  std::vector<std::pair<cudaGraphNode_t, cudaGraphNode_t>> Edges() const;
  // cudaGraphAddDependencies: false (nothing added) if a node is foreign or an edge exists.
  bool AddEdges(const cudaGraphNode_t* from, const cudaGraphNode_t* to, size_t count);
  // Whether `node` is `target` or one of its ancestors.
  bool Reaches(cudaGraphNode_t node, const std::vector<cudaGraphNode_t>& targets) const;
  // A new graph with the same nodes, edges and user-object references (child graphs cloned).
  cudaGraph_t Clone() const;
  // Keeps `count` references to `object` until the graph is destroyed; with `move` they are the
  // caller's, otherwise new ones.
  void KeepUserObject(UserObject* object, unsigned count, bool move);
  // Takes back `count` references (cudaGraphReleaseUserObject); false if it holds fewer.
  bool DropUserObject(UserObject* object, unsigned count);
  UserObjectRefs user_objects() const;

  // The node actions in dependency order (among ready nodes, creation order), child graphs
  // flattened into their place, and the user objects of this graph and its children.
  // False on a dependency cycle.
  bool Linearize(std::vector<NodeAction>* steps, UserObjectRefs* objects) const;
  // Same node types and the same edges, node by node in creation order, child graphs
  // included: the condition for cudaGraphExecUpdate. On a mismatch, the first differing node
  // of this graph and the reason.
  bool SameTopology(const Graph& other, cudaGraphNode_t* differing, cudaGraphExecUpdateResult* why) const;

 private:
  Graph() = default;
  ~Graph();
  bool OwnsLocked(cudaGraphNode_t node) const;
  size_t IndexLocked(cudaGraphNode_t node) const;

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<GraphNode>> nodes_;
  UserObjectRefs user_objects_;
};

// An executable graph: a snapshot of a graph's steps and user-object references.
class GraphExec {
 public:
  struct Plan {
    std::vector<NodeAction> steps;
    UserObjectRefs objects;
    ~Plan();
  };

  // cudaErrorInvalidValue for a graph with a cycle.
  static cudaError_t Create(const Graph& graph, unsigned long long flags, cudaGraphExec_t* out);
  static GraphExec* Lookup(cudaGraphExec_t handle);
  static bool Destroy(cudaGraphExec_t handle);

  unsigned long long flags() const { return flags_; }
  // What a launch runs; launches in flight keep theirs after an update or destroy.
  std::shared_ptr<const Plan> plan() const;
  // cudaGraphExecUpdate: takes `graph`'s actions if its topology matches.
  cudaError_t Update(const Graph& graph, cudaGraphExecUpdateResultInfo* info);
  // Launches of one executable graph run one after another, as in CUDA: each launch waits for
  // the end of the previous one (returned) and records its own.
  StreamPoint ExchangeLastLaunch(StreamPoint point);

 private:
  GraphExec(std::shared_ptr<const Plan> plan, cudaGraph_t shape, unsigned long long flags)
      : plan_(std::move(plan)), shape_(shape), flags_(flags) {}
  ~GraphExec();
  mutable std::mutex mu_;
  std::shared_ptr<const Plan> plan_;
  cudaGraph_t shape_;  // a clone of the source graph, what an update is compared with
  const unsigned long long flags_;
  StreamPoint last_launch_;
};

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_GRAPH_H_
