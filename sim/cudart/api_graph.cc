// Graph construction and inspection entry points on graph.h's model: creation, the
// cudaGraphAdd*Node calls, edges, queries, clones, DOT dumps and user objects. Conditional,
// memory allocation/free and external semaphore nodes are not supported (cudaErrorNotSupported
// and one stderr line); arrays and symbols are not either (cudaErrorInvalidValue).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "api_common.h"
#include "capture.h"
#include "graph.h"

namespace ncclsim {
namespace {

constexpr const char* kNoDeviceCode = "graphs never run device code in the sim";

// Sets `count` elements of `size` bytes each to the low `size` bytes of `value`.
void Fill(unsigned char* dst, unsigned value, unsigned size, size_t count) {
  if (size == 1) {
    std::memset(dst, static_cast<int>(value & 0xff), count);
    return;
  }
  for (size_t i = 0; i < count; ++i) std::memcpy(dst + i * size, &value, size);
}

cudaError_t MemsetAction(const cudaMemsetParams& p, NodeAction* out) {
  if (p.dst == nullptr || (p.elementSize != 1 && p.elementSize != 2 && p.elementSize != 4) || p.height == 0 ||
      (p.height > 1 && p.pitch < p.width * p.elementSize)) {
    return cudaErrorInvalidValue;
  }
  *out = MakeAction(cudaGraphNodeTypeMemset, [p] {
    for (size_t row = 0; row < p.height; ++row) {
      Fill(static_cast<unsigned char*>(p.dst) + row * p.pitch, p.value, p.elementSize, p.width);
    }
  });
  return cudaSuccess;
}

// Linear memory only: the sim has no CUDA arrays.
cudaError_t MemcpyAction(const cudaMemcpy3DParms& p, NodeAction* out) {
  if (p.srcArray != nullptr || p.dstArray != nullptr || p.srcPtr.ptr == nullptr || p.dstPtr.ptr == nullptr) {
    return cudaErrorInvalidValue;
  }
  const size_t width = p.extent.width, height = std::max<size_t>(p.extent.height, 1),
               depth = std::max<size_t>(p.extent.depth, 1);
  const size_t spitch = p.srcPtr.pitch != 0 ? p.srcPtr.pitch : width, dpitch = p.dstPtr.pitch != 0 ? p.dstPtr.pitch : width;
  if (width > spitch || width > dpitch) return cudaErrorInvalidPitchValue;
  const size_t sslice = spitch * std::max<size_t>(p.srcPtr.ysize, height);
  const size_t dslice = dpitch * std::max<size_t>(p.dstPtr.ysize, height);
  auto* src = static_cast<const unsigned char*>(p.srcPtr.ptr) + p.srcPos.z * sslice + p.srcPos.y * spitch + p.srcPos.x;
  auto* dst = static_cast<unsigned char*>(p.dstPtr.ptr) + p.dstPos.z * dslice + p.dstPos.y * dpitch + p.dstPos.x;
  *out = MakeAction(cudaGraphNodeTypeMemcpy, [=] {
    for (size_t z = 0; z < depth; ++z) {
      for (size_t y = 0; y < height; ++y) std::memmove(dst + z * dslice + y * dpitch, src + z * sslice + y * spitch, width);
    }
  });
  return cudaSuccess;
}

cudaError_t ChildAction(cudaGraph_t child, cudaGraphChildGraphNodeOwnership ownership, NodeAction* out) {
  Graph* g = Graph::Lookup(child);
  if (g == nullptr || Captures::Get().CapturesInto(child)) return cudaErrorInvalidValue;
  *out = MakeAction(cudaGraphNodeTypeGraph);
  // Moved: the node owns the caller's graph; cloned (the default): a copy of it.
  out->child = ownership == cudaGraphChildGraphOwnershipMove ? child : g->Clone();
  return cudaSuccess;
}

cudaError_t EventAction(cudaGraphNodeType type, cudaEvent_t event, NodeAction* out) {
  if (Event::Lookup(event) == nullptr) return cudaErrorInvalidResourceHandle;
  *out = MakeAction(type);
  out->event = event;
  return cudaSuccess;
}

cudaError_t ActionFromParams(const cudaGraphNodeParams& p, NodeAction* out) {
  switch (p.type) {
    case cudaGraphNodeTypeKernel:
      if (p.kernel.func == nullptr) return cudaErrorInvalidDeviceFunction;
      *out = MakeAction(cudaGraphNodeTypeKernel);
      return cudaSuccess;
    case cudaGraphNodeTypeMemcpy:
      return MemcpyAction(p.memcpy.copyParams, out);
    case cudaGraphNodeTypeMemset: {
      const cudaMemsetParams m{p.memset.dst, p.memset.pitch, p.memset.value, p.memset.elementSize, p.memset.width,
                               p.memset.height};
      return MemsetAction(m, out);
    }
    case cudaGraphNodeTypeHost:
      if (p.host.fn == nullptr) return cudaErrorInvalidValue;
      *out = HostAction(p.host.fn, p.host.userData);
      return cudaSuccess;
    case cudaGraphNodeTypeGraph:
      return ChildAction(p.graph.graph, p.graph.ownership, out);
    case cudaGraphNodeTypeEmpty:
      *out = MakeAction(cudaGraphNodeTypeEmpty);
      return cudaSuccess;
    case cudaGraphNodeTypeWaitEvent:
      return EventAction(cudaGraphNodeTypeWaitEvent, p.eventWait.event, out);
    case cudaGraphNodeTypeEventRecord:
      return EventAction(cudaGraphNodeTypeEventRecord, p.eventRecord.event, out);
    case cudaGraphNodeTypeConditional:
      return Unsupported("cudaGraphAddNode(conditional)", kNoDeviceCode);
    case cudaGraphNodeTypeMemAlloc:
    case cudaGraphNodeTypeMemFree:
      return Unsupported("cudaGraphAddNode(memory)", "graphs allocate no memory in the sim");
    case cudaGraphNodeTypeExtSemaphoreSignal:
    case cudaGraphNodeTypeExtSemaphoreWait:
      return Unsupported("cudaGraphAddNode(external semaphore)", "the sim has no external semaphores");
    default:
      return cudaErrorInvalidValue;
  }
}

// The common part of every cudaGraphAdd*Node: `make` builds the action once the graph and the
// dependencies are known to be valid.
template <typename Make>
cudaError_t AddNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count, Make&& make) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  Graph* g = Graph::Lookup(graph);
  if (out == nullptr || g == nullptr || (count != 0 && deps == nullptr)) return cudaErrorInvalidValue;
  for (size_t i = 0; i < count; ++i) {
    if (!g->Owns(deps[i])) return cudaErrorInvalidValue;
  }
  NodeAction action;
  if (cudaError_t e = make(&action); e != cudaSuccess) return e;
  cudaGraphNode_t node = g->Add(std::move(action), deps, count);
  if (node == nullptr) return cudaErrorInvalidValue;
  *out = node;
  return cudaSuccess;
}

// Copies up to *count of `all` into `out` (nulls after them), or only reports the total.
cudaError_t ListNodes(const std::vector<cudaGraphNode_t>& all, cudaGraphNode_t* out, cudaGraphEdgeData* edges,
                      size_t* count) {
  if (count == nullptr || (edges != nullptr && out == nullptr)) return cudaErrorInvalidValue;
  if (out == nullptr) {
    *count = all.size();
    return cudaSuccess;
  }
  const size_t n = std::min(*count, all.size());
  for (size_t i = 0; i < *count; ++i) out[i] = i < n ? all[i] : nullptr;
  if (edges != nullptr) std::memset(edges, 0, *count * sizeof(*edges));  // default edges only
  *count = n;
  return cudaSuccess;
}

// The graph and node behind a node handle.
cudaError_t LookupNode(cudaGraphNode_t handle, GraphNode** node) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  *node = Graph::LookupNode(handle);
  return *node != nullptr ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t GetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count, bool roots) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  Graph* g = Graph::Lookup(graph);
  if (g == nullptr) return cudaErrorInvalidValue;
  return ListNodes(roots ? g->RootNodes() : g->Nodes(), nodes, nullptr, count);
}

cudaError_t GetEdges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to, cudaGraphEdgeData* edges,
                     size_t* count) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  Graph* g = Graph::Lookup(graph);
  if (g == nullptr || count == nullptr || ((from == nullptr) != (to == nullptr))) return cudaErrorInvalidValue;
  const auto all = g->Edges();
  if (from == nullptr) {
    *count = all.size();
    return cudaSuccess;
  }
  const size_t n = std::min(*count, all.size());
  for (size_t i = 0; i < *count; ++i) {
    from[i] = i < n ? all[i].first : nullptr;
    to[i] = i < n ? all[i].second : nullptr;
  }
  if (edges != nullptr) std::memset(edges, 0, *count * sizeof(*edges));
  *count = n;
  return cudaSuccess;
}

cudaError_t NodeNeighbours(cudaGraphNode_t handle, cudaGraphNode_t* out, cudaGraphEdgeData* edges, size_t* count,
                           bool dependents) {
  GraphNode* n;
  if (cudaError_t e = LookupNode(handle, &n); e != cudaSuccess) return e;
  return ListNodes(dependents ? n->owner->Dependents(handle) : n->owner->Dependencies(handle), out, edges, count);
}

const char* TypeName(cudaGraphNodeType type) {
  switch (type) {
    case cudaGraphNodeTypeKernel: return "kernel";
    case cudaGraphNodeTypeMemcpy: return "memcpy";
    case cudaGraphNodeTypeMemset: return "memset";
    case cudaGraphNodeTypeHost: return "host";
    case cudaGraphNodeTypeGraph: return "graph";
    case cudaGraphNodeTypeEmpty: return "empty";
    case cudaGraphNodeTypeWaitEvent: return "event wait";
    case cudaGraphNodeTypeEventRecord: return "event record";
    default: return "other";
  }
}

// A plain DOT file: one box per node (its type), one arrow per edge.
cudaError_t DotPrint(cudaGraph_t graph, const char* path) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  Graph* g = Graph::Lookup(graph);
  if (g == nullptr || path == nullptr) return cudaErrorInvalidValue;
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) return cudaErrorOperatingSystem;
  std::map<cudaGraphNode_t, size_t> index;
  std::fprintf(f, "digraph ncclsim_graph {\n");
  for (cudaGraphNode_t n : g->Nodes()) {
    index[n] = index.size();
    std::fprintf(f, "  n%zu [shape=box label=\"%zu %s\"];\n", index[n], index[n], TypeName(Graph::LookupNode(n)->action.type));
  }
  for (const auto& [from, to] : g->Edges()) std::fprintf(f, "  n%zu -> n%zu;\n", index[from], index[to]);
  std::fprintf(f, "}\n");
  return std::fclose(f) == 0 ? cudaSuccess : cudaErrorOperatingSystem;
}

cudaError_t CreateUserObject(cudaUserObject_t* out, void* ptr, cudaHostFn_t destroy, unsigned references,
                             unsigned flags) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  // CUDA requires the flag: destructors never run synchronised with any CUDA handle.
  if (out == nullptr || destroy == nullptr || references == 0 || flags != cudaUserObjectNoDestructorSync) {
    return cudaErrorInvalidValue;
  }
  *out = UserObject::Create(ptr, destroy, references);
  return cudaSuccess;
}

cudaError_t ChangeUserObject(cudaUserObject_t handle, unsigned count, bool retain) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  UserObject* object = UserObject::Lookup(handle);
  if (object == nullptr || count == 0) return cudaErrorInvalidValue;
  if (retain) {
    object->Retain(count);
  } else {
    object->Release(count);
  }
  return cudaSuccess;
}

cudaError_t GraphUserObject(cudaGraph_t graph, cudaUserObject_t handle, unsigned count, unsigned flags, bool retain) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  Graph* g = Graph::Lookup(graph);
  UserObject* object = UserObject::Lookup(handle);
  if (g == nullptr || object == nullptr || count == 0 || (flags & ~cudaGraphUserObjectMove) != 0) {
    return cudaErrorInvalidValue;
  }
  if (!retain) return g->DropUserObject(object, count) ? cudaSuccess : cudaErrorInvalidValue;
  g->KeepUserObject(object, count, (flags & cudaGraphUserObjectMove) != 0);
  return cudaSuccess;
}

}  // namespace
}  // namespace ncclsim

using ncclsim::AddNode;
using ncclsim::NodeAction;
using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int flags) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  if (graph == nullptr || flags != 0) return Report(cudaErrorInvalidValue);
  *graph = ncclsim::Graph::Create();
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  // A graph a capture still records into may not be destroyed (CUDA permits every operation
  // on it but destroy and node removal).
  if (ncclsim::Captures::Get().CapturesInto(graph)) return Report(cudaErrorIllegalState);
  return Report(ncclsim::Graph::Destroy(graph) ? cudaSuccess : cudaErrorInvalidValue);
}
NCCLSIM_EXPORT cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  ncclsim::Graph* g = ncclsim::Graph::Lookup(original);
  if (clone == nullptr || g == nullptr) return Report(cudaErrorInvalidValue);
  *clone = g->Clone();
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                            const cudaGraphEdgeData*, size_t count, cudaGraphNodeParams* params) {
  return Report(AddNode(node, graph, deps, count, [&](NodeAction* a) {
    return params != nullptr ? ncclsim::ActionFromParams(*params, a) : cudaErrorInvalidValue;
  }));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                 const cudaGraphNode_t* deps, size_t count) {
  return Report(AddNode(node, graph, deps, count, [](NodeAction* a) {
    *a = ncclsim::MakeAction(cudaGraphNodeTypeEmpty);
    return cudaSuccess;
  }));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                  const cudaGraphNode_t* deps, size_t count,
                                                  const cudaKernelNodeParams* params) {
  return Report(AddNode(node, graph, deps, count, [&](NodeAction* a) {
    if (params == nullptr) return cudaErrorInvalidValue;
    if (params->func == nullptr) return cudaErrorInvalidDeviceFunction;
    *a = ncclsim::MakeAction(cudaGraphNodeTypeKernel);
    return cudaSuccess;
  }));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                                size_t count, const cudaHostNodeParams* params) {
  return Report(AddNode(node, graph, deps, count, [&](NodeAction* a) {
    if (params == nullptr || params->fn == nullptr) return cudaErrorInvalidValue;
    *a = ncclsim::HostAction(params->fn, params->userData);
    return cudaSuccess;
  }));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                  const cudaGraphNode_t* deps, size_t count,
                                                  const cudaMemsetParams* params) {
  return Report(AddNode(node, graph, deps, count, [&](NodeAction* a) {
    return params != nullptr ? ncclsim::MemsetAction(*params, a) : cudaErrorInvalidValue;
  }));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                  const cudaGraphNode_t* deps, size_t count,
                                                  const cudaMemcpy3DParms* params) {
  return Report(AddNode(node, graph, deps, count, [&](NodeAction* a) {
    return params != nullptr ? ncclsim::MemcpyAction(*params, a) : cudaErrorInvalidValue;
  }));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph,
                                                    const cudaGraphNode_t* deps, size_t count, void* dst,
                                                    const void* src, size_t bytes, cudaMemcpyKind kind) {
  cudaMemcpy3DParms p{};
  p.srcPtr = cudaPitchedPtr{const_cast<void*>(src), bytes, bytes, 1};
  p.dstPtr = cudaPitchedPtr{dst, bytes, bytes, 1};
  p.extent = cudaExtent{bytes, 1, 1};
  p.kind = kind;
  return Report(AddNode(node, graph, deps, count, [&](NodeAction* a) { return ncclsim::MemcpyAction(p, a); }));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                      const cudaGraphNode_t* deps, size_t count, cudaGraph_t child) {
  return Report(AddNode(node, graph, deps, count, [&](NodeAction* a) {
    return ncclsim::ChildAction(child, cudaGraphChildGraphOwnershipClone, a);
  }));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                       const cudaGraphNode_t* deps, size_t count, cudaEvent_t event) {
  return Report(AddNode(node, graph, deps, count, [&](NodeAction* a) {
    return ncclsim::EventAction(cudaGraphNodeTypeEventRecord, event, a);
  }));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* node, cudaGraph_t graph,
                                                     const cudaGraphNode_t* deps, size_t count, cudaEvent_t event) {
  return Report(AddNode(node, graph, deps, count, [&](NodeAction* a) {
    return ncclsim::EventAction(cudaGraphNodeTypeWaitEvent, event, a);
  }));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from,
                                                    const cudaGraphNode_t* to, const cudaGraphEdgeData*,
                                                    size_t count) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  ncclsim::Graph* g = ncclsim::Graph::Lookup(graph);
  if (g == nullptr || (count != 0 && (from == nullptr || to == nullptr))) return Report(cudaErrorInvalidValue);
  return Report(g->AddEdges(from, to, count) ? cudaSuccess : cudaErrorInvalidValue);
}
NCCLSIM_EXPORT cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle*, cudaGraph_t, unsigned int,
                                                            unsigned int) {
  return Report(ncclsim::Unsupported("cudaGraphConditionalHandleCreate", ncclsim::kNoDeviceCode));
}
NCCLSIM_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  return Report(ncclsim::GetNodes(graph, nodes, count, /*roots=*/false));
}
NCCLSIM_EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  return Report(ncclsim::GetNodes(graph, nodes, count, /*roots=*/true));
}
NCCLSIM_EXPORT cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                                             cudaGraphEdgeData* edges, size_t* count) {
  return Report(ncclsim::GetEdges(graph, from, to, edges, count));
}
NCCLSIM_EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps,
                                                        cudaGraphEdgeData* edges, size_t* count) {
  return Report(ncclsim::NodeNeighbours(node, deps, edges, count, /*dependents=*/false));
}
NCCLSIM_EXPORT cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t* dependents,
                                                          cudaGraphEdgeData* edges, size_t* count) {
  return Report(ncclsim::NodeNeighbours(node, dependents, edges, count, /*dependents=*/true));
}
NCCLSIM_EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* type) {
  ncclsim::GraphNode* n;
  if (cudaError_t e = ncclsim::LookupNode(node, &n); e != cudaSuccess) return Report(e);
  if (type == nullptr) return Report(cudaErrorInvalidValue);
  *type = n->action.type;
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, cudaHostNodeParams* params) {
  ncclsim::GraphNode* n;
  if (cudaError_t e = ncclsim::LookupNode(node, &n); e != cudaSuccess) return Report(e);
  if (params == nullptr || n->action.type != cudaGraphNodeTypeHost) return Report(cudaErrorInvalidValue);
  *params = n->action.host;
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* graph) {
  ncclsim::GraphNode* n;
  if (cudaError_t e = ncclsim::LookupNode(node, &n); e != cudaSuccess) return Report(e);
  if (graph == nullptr || n->action.type != cudaGraphNodeTypeGraph) return Report(cudaErrorInvalidValue);
  *graph = n->action.child;
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char* path, unsigned int) {
  return Report(ncclsim::DotPrint(graph, path));
}
NCCLSIM_EXPORT cudaError_t cudaUserObjectCreate(cudaUserObject_t* object, void* ptr, cudaHostFn_t destroy,
                                                unsigned int references, unsigned int flags) {
  return Report(ncclsim::CreateUserObject(object, ptr, destroy, references, flags));
}
NCCLSIM_EXPORT cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count) {
  return Report(ncclsim::ChangeUserObject(object, count, /*retain=*/true));
}
NCCLSIM_EXPORT cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count) {
  return Report(ncclsim::ChangeUserObject(object, count, /*retain=*/false));
}
NCCLSIM_EXPORT cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                                     unsigned int flags) {
  return Report(ncclsim::GraphUserObject(graph, object, count, flags, /*retain=*/true));
}
NCCLSIM_EXPORT cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count) {
  return Report(ncclsim::GraphUserObject(graph, object, count, 0, /*retain=*/false));
}
