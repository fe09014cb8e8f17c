#include "graph.h"

#include <algorithm>
#include <map>
#include <utility>

#include "handle_registry.h"

namespace ncclsim {
namespace {

// Never destroyed: graphs may be destroyed during exit.
HandleRegistry<Graph>& GraphRegistry() {
  static auto* registry = new HandleRegistry<Graph>();
  return *registry;
}
HandleRegistry<GraphNode>& NodeRegistry() {
  static auto* registry = new HandleRegistry<GraphNode>();
  return *registry;
}
HandleRegistry<UserObject>& UserObjectRegistry() {
  static auto* registry = new HandleRegistry<UserObject>();
  return *registry;
}

struct CaptureTarget {
  cudaGraph_t graph;
  std::vector<cudaGraphNode_t> dependencies;
};
std::mutex targets_mu;
std::map<const void*, CaptureTarget>& Targets() {
  static auto* targets = new std::map<const void*, CaptureTarget>();
  return *targets;
}

}  // namespace

void SetCaptureTarget(const void* stream, cudaGraph_t graph, std::vector<cudaGraphNode_t> dependencies) {
  std::lock_guard<std::mutex> lock(targets_mu);
  Targets()[stream] = CaptureTarget{graph, std::move(dependencies)};
}

bool TakeCaptureTarget(const void* stream, cudaGraph_t* graph, std::vector<cudaGraphNode_t>* dependencies) {
  std::lock_guard<std::mutex> lock(targets_mu);
  auto it = Targets().find(stream);
  if (it == Targets().end()) return false;
  *graph = it->second.graph;
  *dependencies = std::move(it->second.dependencies);
  Targets().erase(it);
  return true;
}

cudaUserObject_t UserObject::Create(void* ptr, cudaHostFn_t destroy, unsigned references) {
  auto* object = new UserObject(ptr, destroy, references);
  UserObjectRegistry().Add(object);
  return reinterpret_cast<cudaUserObject_t>(object);
}

UserObject* UserObject::Lookup(cudaUserObject_t handle) { return UserObjectRegistry().Lookup(handle); }

void UserObject::Release(unsigned count) {
  if (references_.fetch_sub(count) != count) return;
  UserObjectRegistry().Remove(this);
  destroy_(ptr_);
  delete this;
}

cudaGraph_t Graph::Create() {
  auto* graph = new Graph();
  GraphRegistry().Add(graph);
  return reinterpret_cast<cudaGraph_t>(graph);
}

Graph* Graph::Lookup(cudaGraph_t handle) { return GraphRegistry().Lookup(handle); }

bool Graph::Destroy(cudaGraph_t handle) {
  Graph* graph = GraphRegistry().Lookup(handle);
  if (graph == nullptr || !GraphRegistry().Remove(graph)) return false;
  delete graph;
  return true;
}

GraphNode* Graph::LookupNode(cudaGraphNode_t node) { return NodeRegistry().Lookup(node); }

Graph::~Graph() {
  for (auto& node : nodes_) NodeRegistry().Remove(node.get());
  for (auto& [object, count] : user_objects_) object->Release(count);
}

bool Graph::OwnsLocked(cudaGraphNode_t node) const {
  return std::any_of(nodes_.begin(), nodes_.end(),
                     [node](const auto& n) { return reinterpret_cast<cudaGraphNode_t>(n.get()) == node; });
}

cudaGraphNode_t Graph::AddNode(cudaGraphNodeType type, const cudaGraphNode_t* dependencies, size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  auto node = std::make_unique<GraphNode>();
  node->type = type;
  for (size_t i = 0; i < count; ++i) {
    if (!OwnsLocked(dependencies[i])) return nullptr;
    node->dependencies.push_back(dependencies[i]);
  }
  NodeRegistry().Add(node.get());
  nodes_.push_back(std::move(node));
  return reinterpret_cast<cudaGraphNode_t>(nodes_.back().get());
}

void Graph::AppendCaptured(size_t count, std::vector<cudaGraphNode_t> dependencies) {
  for (size_t i = 0; i < count; ++i) {
    cudaGraphNode_t node = AddNode(cudaGraphNodeTypeEmpty, dependencies.data(), dependencies.size());
    if (node == nullptr) node = AddNode(cudaGraphNodeTypeEmpty, nullptr, 0);  // foreign dependencies dropped
    dependencies.assign(1, node);
  }
}

size_t Graph::node_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return nodes_.size();
}

std::vector<cudaGraphNode_t> Graph::Nodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<cudaGraphNode_t> out;
  for (const auto& n : nodes_) out.push_back(reinterpret_cast<cudaGraphNode_t>(n.get()));
  return out;
}

void Graph::KeepUserObject(UserObject* object, unsigned count, bool move) {
  if (!move) object->Retain(count);
  std::lock_guard<std::mutex> lock(mu_);
  user_objects_.emplace_back(object, count);
}

}  // namespace ncclsim
