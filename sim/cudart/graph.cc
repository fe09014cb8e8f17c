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
HandleRegistry<GraphExec>& ExecRegistry() {
  static auto* registry = new HandleRegistry<GraphExec>();
  return *registry;
}

cudaGraphNode_t HandleOf(const GraphNode* node) {
  return reinterpret_cast<cudaGraphNode_t>(const_cast<GraphNode*>(node));
}

void ReleaseAll(const UserObjectRefs& refs) {
  for (const auto& [object, count] : refs) object->Release(count);
}

}  // namespace

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
  return graph->handle();
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
  for (auto& node : nodes_) {
    NodeRegistry().Remove(node.get());
    if (node->action.child != nullptr) Destroy(node->action.child);
  }
  ReleaseAll(user_objects_);
}

bool Graph::OwnsLocked(cudaGraphNode_t node) const { return IndexLocked(node) < nodes_.size(); }

size_t Graph::IndexLocked(cudaGraphNode_t node) const {
  auto it = std::find_if(nodes_.begin(), nodes_.end(), [node](const auto& n) { return HandleOf(n.get()) == node; });
  return static_cast<size_t>(it - nodes_.begin());
}

bool Graph::Owns(cudaGraphNode_t node) const {
  std::lock_guard<std::mutex> lock(mu_);
  return OwnsLocked(node);
}

cudaGraphNode_t Graph::Add(NodeAction action, const cudaGraphNode_t* dependencies, size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  auto node = std::make_unique<GraphNode>();
  for (size_t i = 0; i < count; ++i) {
    if (!OwnsLocked(dependencies[i])) return nullptr;
    // CUDA keeps one edge per pair: a dependency named twice counts once.
    if (std::find(node->dependencies.begin(), node->dependencies.end(), dependencies[i]) == node->dependencies.end()) {
      node->dependencies.push_back(dependencies[i]);
    }
  }
  node->action = std::move(action);
  node->owner = this;
  NodeRegistry().Add(node.get());
  nodes_.push_back(std::move(node));
  return HandleOf(nodes_.back().get());
}

std::vector<cudaGraphNode_t> Graph::Nodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<cudaGraphNode_t> out;
  for (const auto& n : nodes_) out.push_back(HandleOf(n.get()));
  return out;
}

std::vector<cudaGraphNode_t> Graph::RootNodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<cudaGraphNode_t> out;
  for (const auto& n : nodes_) {
    if (n->dependencies.empty()) out.push_back(HandleOf(n.get()));
  }
  return out;
}

std::vector<cudaGraphNode_t> Graph::Dependencies(cudaGraphNode_t node) const {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t i = IndexLocked(node);
  return i < nodes_.size() ? nodes_[i]->dependencies : std::vector<cudaGraphNode_t>{};
}

std::vector<cudaGraphNode_t> Graph::Dependents(cudaGraphNode_t node) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<cudaGraphNode_t> out;
  for (const auto& n : nodes_) {
    const auto& d = n->dependencies;
    if (std::find(d.begin(), d.end(), node) != d.end()) out.push_back(HandleOf(n.get()));
  }
  return out;
}

std::vector<std::pair<cudaGraphNode_t, cudaGraphNode_t>> Graph::Edges() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<cudaGraphNode_t, cudaGraphNode_t>> out;
  for (const auto& n : nodes_) {
    for (cudaGraphNode_t from : n->dependencies) out.emplace_back(from, HandleOf(n.get()));
  }
  return out;
}

bool Graph::AddEdges(const cudaGraphNode_t* from, const cudaGraphNode_t* to, size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < count; ++i) {
    if (!OwnsLocked(from[i]) || !OwnsLocked(to[i]) || from[i] == to[i]) return false;
    const auto& d = nodes_[IndexLocked(to[i])]->dependencies;
    if (std::find(d.begin(), d.end(), from[i]) != d.end()) return false;
  }
  for (size_t i = 0; i < count; ++i) nodes_[IndexLocked(to[i])]->dependencies.push_back(from[i]);
  return true;
}

bool Graph::Reaches(cudaGraphNode_t node, const std::vector<cudaGraphNode_t>& targets) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<cudaGraphNode_t> pending = targets;
  std::vector<bool> seen(nodes_.size(), false);
  while (!pending.empty()) {
    cudaGraphNode_t n = pending.back();
    pending.pop_back();
    if (n == node) return true;
    const size_t i = IndexLocked(n);
    if (i >= nodes_.size() || seen[i]) continue;
    seen[i] = true;
    pending.insert(pending.end(), nodes_[i]->dependencies.begin(), nodes_[i]->dependencies.end());
  }
  return false;
}

cudaGraph_t Graph::Clone() const {
  cudaGraph_t copy_handle = Create();
  Graph* copy = Lookup(copy_handle);
  std::lock_guard<std::mutex> lock(mu_);
  std::map<cudaGraphNode_t, cudaGraphNode_t> mapped;
  for (const auto& n : nodes_) {
    NodeAction action = n->action;
    if (action.child != nullptr) action.child = Lookup(action.child)->Clone();
    std::vector<cudaGraphNode_t> deps;
    for (cudaGraphNode_t d : n->dependencies) deps.push_back(mapped.at(d));
    mapped[HandleOf(n.get())] = copy->Add(std::move(action), deps.data(), deps.size());
  }
  for (const auto& [object, count] : user_objects_) copy->KeepUserObject(object, count, /*move=*/false);
  return copy_handle;
}

void Graph::KeepUserObject(UserObject* object, unsigned count, bool move) {
  if (!move) object->Retain(count);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [o, n] : user_objects_) {
    if (o == object) {
      n += count;
      return;
    }
  }
  user_objects_.emplace_back(object, count);
}

bool Graph::DropUserObject(UserObject* object, unsigned count) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(user_objects_.begin(), user_objects_.end(), [&](const auto& r) { return r.first == object; });
    if (it == user_objects_.end() || it->second < count) return false;
    it->second -= count;
    if (it->second == 0) user_objects_.erase(it);
  }
  object->Release(count);
  return true;
}

UserObjectRefs Graph::user_objects() const {
  std::lock_guard<std::mutex> lock(mu_);
  return user_objects_;
}

bool Graph::Linearize(std::vector<NodeAction>* steps, UserObjectRefs* objects) const {
  std::lock_guard<std::mutex> lock(mu_);
  objects->insert(objects->end(), user_objects_.begin(), user_objects_.end());
  std::vector<size_t> waiting(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) waiting[i] = nodes_[i]->dependencies.size();
  std::vector<bool> done(nodes_.size(), false);
  for (size_t emitted = 0; emitted < nodes_.size(); ++emitted) {
    size_t next = 0;
    while (next < nodes_.size() && (done[next] || waiting[next] != 0)) ++next;
    if (next == nodes_.size()) return false;  // every remaining node waits: a cycle
    done[next] = true;
    const NodeAction& action = nodes_[next]->action;
    if (action.child != nullptr) {
      if (!Lookup(action.child)->Linearize(steps, objects)) return false;
    } else {
      steps->push_back(action);
    }
    const cudaGraphNode_t handle = HandleOf(nodes_[next].get());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      waiting[i] -= std::count(nodes_[i]->dependencies.begin(), nodes_[i]->dependencies.end(), handle);
    }
  }
  return true;
}

bool Graph::SameTopology(const Graph& other, cudaGraphNode_t* differing, cudaGraphExecUpdateResult* why) const {
  std::scoped_lock lock(mu_, other.mu_);
  *differing = nullptr;
  if (nodes_.size() != other.nodes_.size()) {
    *why = cudaGraphExecUpdateErrorTopologyChanged;
    return false;
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const GraphNode& a = *nodes_[i];
    const GraphNode& b = *other.nodes_[i];
    *differing = HandleOf(&a);
    if (a.action.type != b.action.type) {
      *why = cudaGraphExecUpdateErrorNodeTypeChanged;
      return false;
    }
    std::vector<size_t> da, db;
    for (cudaGraphNode_t d : a.dependencies) da.push_back(IndexLocked(d));
    for (cudaGraphNode_t d : b.dependencies) db.push_back(other.IndexLocked(d));
    std::sort(da.begin(), da.end());
    std::sort(db.begin(), db.end());
    *why = cudaGraphExecUpdateErrorTopologyChanged;
    if (da != db) return false;
    if (a.action.child != nullptr) {
      cudaGraphNode_t inner = nullptr;
      if (!Lookup(a.action.child)->SameTopology(*Lookup(b.action.child), &inner, why)) return false;
    }
  }
  *differing = nullptr;
  *why = cudaGraphExecUpdateSuccess;
  return true;
}

GraphExec::Plan::~Plan() { ReleaseAll(objects); }

// The plan of `graph`: its steps, and references of its own to the user objects of the graph
// and its children, as CUDA copies them at instantiation.
static cudaError_t MakePlan(const Graph& graph, std::shared_ptr<const GraphExec::Plan>* out) {
  auto plan = std::make_shared<GraphExec::Plan>();
  UserObjectRefs objects;
  if (!graph.Linearize(&plan->steps, &objects)) return cudaErrorInvalidValue;
  for (const auto& [object, count] : objects) object->Retain(count);
  plan->objects = std::move(objects);
  *out = std::move(plan);
  return cudaSuccess;
}

cudaError_t GraphExec::Create(const Graph& graph, unsigned long long flags, cudaGraphExec_t* out) {
  std::shared_ptr<const Plan> plan;
  if (cudaError_t e = MakePlan(graph, &plan); e != cudaSuccess) return e;
  auto* exec = new GraphExec(std::move(plan), graph.Clone(), flags);
  ExecRegistry().Add(exec);
  *out = reinterpret_cast<cudaGraphExec_t>(exec);
  return cudaSuccess;
}

GraphExec* GraphExec::Lookup(cudaGraphExec_t handle) { return ExecRegistry().Lookup(handle); }

bool GraphExec::Destroy(cudaGraphExec_t handle) {
  GraphExec* exec = ExecRegistry().Lookup(handle);
  if (exec == nullptr || !ExecRegistry().Remove(exec)) return false;
  delete exec;
  return true;
}

GraphExec::~GraphExec() { Graph::Destroy(shape_); }

std::shared_ptr<const GraphExec::Plan> GraphExec::plan() const {
  std::lock_guard<std::mutex> lock(mu_);
  return plan_;
}

cudaError_t GraphExec::Update(const Graph& graph, cudaGraphExecUpdateResultInfo* info) {
  std::lock_guard<std::mutex> lock(mu_);
  cudaGraphExecUpdateResultInfo result{};
  result.result = cudaGraphExecUpdateSuccess;
  std::shared_ptr<const Plan> plan;
  if (!graph.SameTopology(*Graph::Lookup(shape_), &result.errorNode, &result.result) ||
      MakePlan(graph, &plan) != cudaSuccess) {
    if (result.result == cudaGraphExecUpdateSuccess) result.result = cudaGraphExecUpdateErrorTopologyChanged;
    if (info != nullptr) *info = result;
    return cudaErrorGraphExecUpdateFailure;
  }
  if (info != nullptr) *info = result;
  plan_ = std::move(plan);
  Graph::Destroy(shape_);
  shape_ = graph.Clone();
  return cudaSuccess;
}

StreamPoint GraphExec::ExchangeLastLaunch(StreamPoint point) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(last_launch_, std::move(point));
}

}  // namespace ncclsim
