// Graph construction and inspection entry points, on the node model of graph.h:
// cudaStreamBeginCaptureToGraph, cudaStreamUpdateCaptureDependencies, cudaGraphAddNode,
// cudaGraphGetNodes, cudaGraphNodeGetDependencies, user objects. Conditional nodes and memory
// allocation nodes are not supported (cudaErrorNotSupported and one stderr line).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "api_common.h"
#include "graph.h"

namespace ncclsim {
namespace {

cudaError_t BeginCaptureToGraph(cudaStream_t handle, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                size_t count, cudaStreamCaptureMode mode) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, DefaultStream::kLegacy, &s); e != cudaSuccess) return e;
  Graph* g = Graph::Lookup(graph);
  if (g == nullptr || (count != 0 && deps == nullptr)) return cudaErrorInvalidValue;
  if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
      mode != cudaStreamCaptureModeRelaxed) {
    return cudaErrorInvalidValue;
  }
  if (cudaError_t e = Runtime::Get().BeginCapture(s, mode); e != cudaSuccess) return e;
  SetCaptureTarget(s.get(), graph, std::vector<cudaGraphNode_t>(deps, deps + count));
  return cudaSuccess;
}

// The sim chains captured items in stream order, so the dependency set is accepted as is.
cudaError_t UpdateCaptureDependencies(cudaStream_t handle, cudaGraphNode_t* deps, size_t count, unsigned flags) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, DefaultStream::kLegacy, &s); e != cudaSuccess) return e;
  if ((count != 0 && deps == nullptr) ||
      (flags != cudaStreamAddCaptureDependencies && flags != cudaStreamSetCaptureDependencies)) {
    return cudaErrorInvalidValue;
  }
  return Runtime::Get().CaptureOf(*s, nullptr) ? cudaSuccess : cudaErrorIllegalState;
}

cudaError_t AddNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                    const cudaGraphNodeParams* params) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  Graph* g = Graph::Lookup(graph);
  if (out == nullptr || g == nullptr || params == nullptr || (count != 0 && deps == nullptr)) {
    return cudaErrorInvalidValue;
  }
  switch (params->type) {
    case cudaGraphNodeTypeConditional:
      return Unsupported("cudaGraphAddNode(conditional)", "graphs never run device code in the sim");
    case cudaGraphNodeTypeMemAlloc:
    case cudaGraphNodeTypeMemFree:
      return Unsupported("cudaGraphAddNode(memory)", "graphs allocate no memory in the sim");
    default: break;
  }
  cudaGraphNode_t node = g->AddNode(params->type, deps, count);
  if (node == nullptr) return cudaErrorInvalidValue;  // a dependency from another graph
  *out = node;
  return cudaSuccess;
}

// Copies up to *count of `all` into `out` (nulls after them), or only reports the total.
cudaError_t ListNodes(const std::vector<cudaGraphNode_t>& all, cudaGraphNode_t* out, cudaGraphEdgeData* edges,
                      size_t* count) {
  if (count == nullptr) return cudaErrorInvalidValue;
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

cudaError_t GetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  Graph* g = Graph::Lookup(graph);
  if (g == nullptr) return cudaErrorInvalidValue;
  return ListNodes(g->Nodes(), nodes, nullptr, count);
}

cudaError_t NodeDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps, cudaGraphEdgeData* edges,
                             size_t* count) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  GraphNode* n = Graph::LookupNode(node);
  if (n == nullptr) return cudaErrorInvalidValue;
  return ListNodes(n->dependencies, deps, edges, count);
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

cudaError_t ReleaseUserObject(cudaUserObject_t handle, unsigned count) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  UserObject* object = UserObject::Lookup(handle);
  if (object == nullptr || count == 0) return cudaErrorInvalidValue;
  object->Release(count);
  return cudaSuccess;
}

cudaError_t RetainUserObject(cudaGraph_t graph, cudaUserObject_t handle, unsigned count, unsigned flags) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  Graph* g = Graph::Lookup(graph);
  UserObject* object = UserObject::Lookup(handle);
  if (g == nullptr || object == nullptr || count == 0 || (flags & ~cudaGraphUserObjectMove) != 0) {
    return cudaErrorInvalidValue;
  }
  g->KeepUserObject(object, count, (flags & cudaGraphUserObjectMove) != 0);
  return cudaSuccess;
}

}  // namespace
}  // namespace ncclsim

using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t graph,
                                                         const cudaGraphNode_t* deps, const cudaGraphEdgeData*,
                                                         size_t count, cudaStreamCaptureMode mode) {
  return Report(ncclsim::BeginCaptureToGraph(s, graph, deps, count, mode));
}
NCCLSIM_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* deps,
                                                               const cudaGraphEdgeData*, size_t count,
                                                               unsigned int flags) {
  return Report(ncclsim::UpdateCaptureDependencies(s, deps, count, flags));
}
NCCLSIM_EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                            const cudaGraphEdgeData*, size_t count, cudaGraphNodeParams* params) {
  return Report(ncclsim::AddNode(node, graph, deps, count, params));
}
NCCLSIM_EXPORT cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle*, cudaGraph_t, unsigned int,
                                                            unsigned int) {
  return Report(ncclsim::Unsupported("cudaGraphConditionalHandleCreate", "graphs never run device code in the sim"));
}
NCCLSIM_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  return Report(ncclsim::GetNodes(graph, nodes, count));
}
NCCLSIM_EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps,
                                                        cudaGraphEdgeData* edges, size_t* count) {
  return Report(ncclsim::NodeDependencies(node, deps, edges, count));
}
NCCLSIM_EXPORT cudaError_t cudaUserObjectCreate(cudaUserObject_t* object, void* ptr, cudaHostFn_t destroy,
                                                unsigned int references, unsigned int flags) {
  return Report(ncclsim::CreateUserObject(object, ptr, destroy, references, flags));
}
NCCLSIM_EXPORT cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count) {
  return Report(ncclsim::ReleaseUserObject(object, count));
}
NCCLSIM_EXPORT cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                                     unsigned int flags) {
  return Report(ncclsim::RetainUserObject(graph, object, count, flags));
}
