// Executable graphs: instantiation, launch (replay), upload, update, destruction, and the
// host-node preparation hook of the private bridge (driver_bridge.h).
//
// A launch puts the executable graph's steps (graph.h) on the launch stream in dependency order:
// copies and sets copy again, host nodes call their function again, event record and wait
// nodes record and wait, kernels keep their place and do nothing. A launch waits for the
// previous launch of the same executable graph, as CUDA orders them.
#include <cuda_runtime_api.h>

#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include "api_common.h"
#include "capture.h"
#include "driver_bridge.h"
#include "graph.h"

namespace ncclsim {
namespace {

constexpr unsigned long long kKnownInstantiateFlags =
    cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUpload |
    cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUseNodePriority;

struct HostNodeHook {
  cudaHostFn_t fn;
  ncclsim_rt_host_node_prepare_fn prepare;
};
std::mutex hooks_mu;
std::vector<HostNodeHook>& Hooks() {
  static auto* hooks = new std::vector<HostNodeHook>();  // never destroyed: launches may run at exit
  return *hooks;
}
std::atomic<bool> any_hook{false};
std::atomic<unsigned long long> launches{0};

ncclsim_rt_host_node_prepare_fn HookFor(cudaHostFn_t fn) {
  if (!any_hook.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard<std::mutex> lock(hooks_mu);
  for (const HostNodeHook& h : Hooks()) {
    if (h.fn == fn) return h.prepare;
  }
  return nullptr;
}

// Serialises launches of one executable graph, so that each one's "after the previous launch"
// is well defined even when two threads launch it at once.
std::mutex& LaunchMutex() {
  static auto* mu = new std::mutex();
  return *mu;
}

cudaError_t Instantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags, bool upload_allowed) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  Graph* g = Graph::Lookup(graph);
  if (exec == nullptr || g == nullptr || (flags & ~kKnownInstantiateFlags) != 0) return cudaErrorInvalidValue;
  // Uploading at instantiation needs the stream only cudaGraphInstantiateWithParams passes.
  if ((flags & cudaGraphInstantiateFlagUpload) && !upload_allowed) return cudaErrorInvalidValue;
  return GraphExec::Create(*g, flags, exec);
}

// What a launch needs before it enqueues anything: the stream and the executable graph, and no
// capture to launch into (the sim does not capture graph launches).
cudaError_t PrepareLaunch(cudaGraphExec_t handle, cudaStream_t stream_handle, DefaultStream ds,
                          std::shared_ptr<Stream>* stream, GraphExec** exec) {
  if (cudaError_t e = ResolveStream(stream_handle, ds, stream); e != cudaSuccess) return e;
  *exec = GraphExec::Lookup(handle);
  if (*exec == nullptr) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaSuccess; Captures::Get().Refuse(**stream, &e)) return e;
  if ((*stream)->kind() == StreamKind::kLegacy) {
    return Captures::Get().CheckLegacyUse((*stream)->device(), /*invalidate=*/true);
  }
  return cudaSuccess;
}

// A host step's launch-time preparation (HookFor): whether it had one, and its result.
struct Prepared {
  bool hooked = false;
  void* arg = nullptr;
};

// Puts one step on the stream. `plan` rides along with every item so that what the steps
// point to (user objects the graph holds) lives until the launch is done.
cudaError_t Enqueue(const std::shared_ptr<Stream>& s, const NodeAction& step, const Prepared& prepared,
                    const std::shared_ptr<const GraphExec::Plan>& plan) {
  switch (step.type) {
    case cudaGraphNodeTypeEventRecord:
      if (Event* e = Event::Lookup(step.event)) return RecordNow(e, s);
      return cudaSuccess;  // the event is gone: nothing to record
    case cudaGraphNodeTypeWaitEvent:
      if (Event* e = Event::Lookup(step.event)) return WaitNow(s, e->point());
      return cudaSuccess;
    case cudaGraphNodeTypeHost: {
      std::function<void()> work = step.work;
      // A prepared node calls its function with what preparing returned, or not at all.
      if (prepared.hooked) work = [fn = step.host.fn, arg = prepared.arg] { if (arg != nullptr) fn(arg); };
      return Runtime::Get().Submit(s, MakeAction(step.type, [work, plan] { work(); }), /*trivial=*/false);
    }
    default: {
      std::function<void()> work = step.work;
      return Runtime::Get().Submit(s, MakeAction(step.type, [work, plan] { if (work) work(); }), /*trivial=*/true);
    }
  }
}

cudaError_t Launch(cudaGraphExec_t handle, cudaStream_t stream_handle, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  GraphExec* exec = nullptr;
  if (cudaError_t e = PrepareLaunch(handle, stream_handle, ds, &s, &exec); e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(LaunchMutex());
  std::shared_ptr<const GraphExec::Plan> plan = exec->plan();
  // Host-side preparation, on the launching thread, in step order, before anything runs.
  const unsigned long long launch_id = ++launches;
  std::vector<Prepared> prepared(plan->steps.size());
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    const NodeAction& step = plan->steps[i];
    if (step.type != cudaGraphNodeTypeHost) continue;
    if (auto prepare = HookFor(step.host.fn)) prepared[i] = Prepared{true, prepare(step.host.userData, launch_id)};
  }
  const StreamPoint previous = exec->ExchangeLastLaunch(StreamPoint{});
  cudaError_t result = cudaSuccess;
  if (previous.stream && previous.stream != s) result = WaitNow(s, previous);
  for (size_t i = 0; i < plan->steps.size() && result == cudaSuccess; ++i) {
    result = Enqueue(s, plan->steps[i], prepared[i], plan);
  }
  // An empty graph still takes its place, so events recorded after it behave.
  if (plan->steps.empty() && result == cudaSuccess) result = LaunchNoOpKernel(stream_handle, ds);
  exec->ExchangeLastLaunch(s->Tail());
  return result;
}

cudaError_t Upload(cudaGraphExec_t handle, cudaStream_t stream_handle, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  GraphExec* exec = nullptr;
  if (cudaError_t e = PrepareLaunch(handle, stream_handle, ds, &s, &exec); e != cudaSuccess) return e;
  // Nothing to upload to a CPU; the upload still takes its place in the stream.
  return Runtime::Get().Submit(s, MakeAction(cudaGraphNodeTypeEmpty), /*trivial=*/true);
}

cudaError_t InstantiateWithParams(cudaGraphExec_t* exec, cudaGraph_t graph, cudaGraphInstantiateParams* params,
                                  DefaultStream ds) {
  if (params == nullptr) return cudaErrorInvalidValue;
  params->errNode_out = nullptr;
  cudaError_t e = Instantiate(exec, graph, params->flags, /*upload_allowed=*/true);
  params->result_out = e == cudaSuccess ? cudaGraphInstantiateSuccess
                       : Graph::Lookup(graph) != nullptr && (params->flags & ~kKnownInstantiateFlags) == 0
                           ? cudaGraphInstantiateInvalidStructure
                           : cudaGraphInstantiateError;
  if (e != cudaSuccess || (params->flags & cudaGraphInstantiateFlagUpload) == 0) return e;
  return Upload(*exec, params->uploadStream, ds);
}

}  // namespace
}  // namespace ncclsim

using ncclsim::DefaultStream;
using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  return Report(ncclsim::Instantiate(exec, graph, flags, /*upload_allowed=*/false));
}
NCCLSIM_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                         unsigned long long flags) {
  return Report(ncclsim::Instantiate(exec, graph, flags, /*upload_allowed=*/false));
}
NCCLSIM_EXPORT cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                          cudaGraphInstantiateParams* params) {
  return Report(ncclsim::InstantiateWithParams(exec, graph, params, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                               cudaGraphInstantiateParams* params) {
  return Report(ncclsim::InstantiateWithParams(exec, graph, params, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  return Report(ncclsim::Launch(exec, s, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t s) {
  return Report(ncclsim::Launch(exec, s, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t s) {
  return Report(ncclsim::Upload(exec, s, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t exec, cudaStream_t s) {
  return Report(ncclsim::Upload(exec, s, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                               cudaGraphExecUpdateResultInfo* info) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  ncclsim::GraphExec* x = ncclsim::GraphExec::Lookup(exec);
  ncclsim::Graph* g = ncclsim::Graph::Lookup(graph);
  if (x == nullptr || g == nullptr || info == nullptr) return Report(cudaErrorInvalidValue);
  return Report(x->Update(*g, info));
}
NCCLSIM_EXPORT cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t exec, unsigned long long* flags) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  ncclsim::GraphExec* x = ncclsim::GraphExec::Lookup(exec);
  if (x == nullptr || flags == nullptr) return Report(cudaErrorInvalidValue);
  *flags = x->flags();
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  // Launches in flight keep their plan (graph.h): destroying now is safe, as in CUDA.
  return Report(ncclsim::GraphExec::Destroy(exec) ? cudaSuccess : cudaErrorInvalidValue);
}

NCCLSIM_EXPORT void ncclsim_rt_set_host_node_prepare(cudaHostFn_t fn, ncclsim_rt_host_node_prepare_fn prepare) {
  std::lock_guard<std::mutex> lock(ncclsim::hooks_mu);
  auto& hooks = ncclsim::Hooks();
  for (auto& h : hooks) {
    if (h.fn == fn) {
      h.prepare = prepare;
      return;
    }
  }
  hooks.push_back(ncclsim::HostNodeHook{fn, prepare});
  ncclsim::any_hook.store(true, std::memory_order_release);
}
