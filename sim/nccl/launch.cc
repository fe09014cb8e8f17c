#include "launch.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "cudart/driver_bridge.h"
#include "last_error.h"
#include "reduction.h"

namespace ncclsim {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<Op> ops;
  std::vector<Comm*> inits;
};

thread_local GroupState g_group;

// Work of one stream from one group; owned by the host function that runs it.
struct StreamTask {
  std::vector<Op> ops;
};

void FinishOne(Comm* c) {
  bool release = false;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    --c->inflight;
    c->cv.notify_all();
    release = c->release_when_idle && c->inflight == 0;
  }
  if (release) delete c;  // aborted earlier with this op still queued (ReleaseComm)
}

// Waits for op's turn among its comm's collectives; false if the comm was aborted.
bool AwaitTurn(const Op& op) {
  Comm* c = op.comm;
  std::unique_lock<std::mutex> lock(c->mu);
  c->cv.wait(lock, [&] { return c->exec_turn == op.ticket || c->aborted.load(); });
  return !c->aborted.load();
}

// Requires c->mu held.
void SkipAbandonedTurns(Comm* c) {
  while (c->skipped_tickets.erase(c->exec_turn) > 0) ++c->exec_turn;
  c->cv.notify_all();
}

void PassTurn(Comm* c) {
  std::lock_guard<std::mutex> lock(c->mu);
  ++c->exec_turn;
  SkipAbandonedTurns(c);
}

void RunTask(void* arg) {
  auto* task = static_cast<StreamTask*>(arg);
  std::vector<bool> done(task->ops.size(), false);
  for (size_t i = 0; i < task->ops.size(); ++i) {
    if (done[i]) continue;
    const Op& op = task->ops[i];
    if (IsOneSided(op.kind)) {
      if (!op.comm->aborted.load()) ExecuteOneSided(op);
      done[i] = true;
      continue;
    }
    if (IsCollective(op.kind)) {
      if (AwaitTurn(op)) ExecuteCollective(op);
      PassTurn(op.comm);
      done[i] = true;
      continue;
    }
    std::vector<const Op*> batch;
    for (size_t j = i; j < task->ops.size(); ++j) {
      if (!done[j] && IsP2p(task->ops[j].kind) && task->ops[j].comm == op.comm) {
        batch.push_back(&task->ops[j]);
        done[j] = true;
      }
    }
    if (!op.comm->aborted.load()) ExecuteP2p(op.comm, batch.data(), batch.size());
  }
  for (const Op& op : task->ops) FinishOne(op.comm);
  delete task;
}

// The handles 0, cudaStreamLegacy and cudaStreamPerThread name one stream per device: the
// current device's. One thread driving several ranks (nccl-tests) passes 0 for each of them.
bool IsDeviceDefaultStream(cudaStream_t s) {
  return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

// `call` with the op's device current when the stream handle depends on the current device.
template <typename Call>
cudaError_t OnDevice(cudaStream_t stream, int device, Call&& call) {
  if (!IsDeviceDefaultStream(stream)) return call();
  int current = 0;
  cudaGetDevice(&current);
  if (current != device) cudaSetDevice(device);
  const cudaError_t err = call();
  if (current != device) cudaSetDevice(current);
  return err;
}

// The task may run and be freed before cudaLaunchHostFunc returns: nothing of it is read after.
ncclResult_t EnqueueTask(StreamTask* task) {
  std::vector<Comm*> comms;
  for (const Op& op : task->ops) comms.push_back(op.comm);
  const Op& first = task->ops.front();
  const cudaError_t err =
      OnDevice(first.stream, first.comm->device, [&] { return cudaLaunchHostFunc(first.stream, RunTask, task); });
  if (err != cudaSuccess) {
    for (const Op& op : task->ops) {
      if (!IsCollective(op.kind)) continue;
      std::lock_guard<std::mutex> lock(op.comm->mu);
      op.comm->skipped_tickets.insert(op.ticket);
      SkipAbandonedTurns(op.comm);
    }
    for (Comm* c : comms) FinishOne(c);
    delete task;
    SetLastError(std::string("cudaLaunchHostFunc failed: ") + cudaGetErrorString(err));
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

Comm* FirstNonblocking(const std::vector<Op>& ops) {
  for (const Op& op : ops)
    if (!op.comm->blocking) return op.comm;
  return nullptr;
}

// Splits ops by stream, keeping call order inside each stream. A per-device default stream
// handle is a different stream for each device.
std::vector<std::vector<Op>> ByStream(std::vector<Op> ops) {
  std::vector<std::vector<Op>> groups;
  std::map<std::pair<cudaStream_t, int>, size_t> by_stream;
  for (Op& op : ops) {
    const int device = IsDeviceDefaultStream(op.stream) ? op.comm->device : -1;
    auto [it, added] = by_stream.try_emplace({op.stream, device}, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(op);
  }
  return groups;
}

std::vector<StreamTask*> TasksByStream(std::vector<Op> ops) {
  std::vector<StreamTask*> tasks;
  for (auto& group : ByStream(std::move(ops))) tasks.push_back(new StreamTask{std::move(group)});
  return tasks;
}

// Takes the op's turn in its communicator's call order and its NCCLSIM_FAULT number, and counts
// it in flight. Requires op->comm->mu held.
void NumberLocked(Op* op) {
  Comm* c = op->comm;
  ++c->inflight;
  if (IsCollective(op->kind)) op->ticket = c->next_ticket++;
  if (!IsOneSided(op->kind)) op->seq = ++c->issued_ops;
}

// ---- CUDA graphs ------------------------------------------------------------------------------
// As in real NCCL, an op issued on a capturing stream is not run: it becomes part of the graph,
// and every launch of the graph runs it again. Each stream's ops of a group are one host node
// (RunReplay) whose argument is the captured plan; the graph owns the plan through a user object,
// as NCCL's persistent plans are owned. When the graph is launched, the sim runtime calls
// PrepareReplay on the launching thread (ncclsim_rt_set_host_node_prepare): the replayed ops take
// their turn and their numbers then, exactly as eager ops do when called, so eager ops issued
// after a launch still match across ranks.

// A group's ops on one capturing stream, as captured: no turn, no number yet.
struct GraphPlan {
  std::vector<Op> ops;
  std::vector<int> comm_indexes;  // each op's comm's index, to tell whether it still lives
};

void DeletePlan(void* plan) { delete static_cast<GraphPlan*>(plan); }

void RunReplay(void* task) { RunTask(task); }

void WarnOnce(const char* text) {
  static std::once_flag once;
  std::call_once(once, [text] { std::fprintf(stderr, "ncclsim: %s\n", text); });
}

void* PrepareReplay(void* data, unsigned long long launch_id) {
  const auto* plan = static_cast<const GraphPlan*>(data);
  auto* task = new StreamTask;
  for (size_t i = 0; i < plan->ops.size(); ++i) {
    Op op = plan->ops[i];
    Comm* c = op.comm;
    if (!CommIsLive(c, plan->comm_indexes[i])) {
      WarnOnce("a CUDA graph replayed a collective of a destroyed communicator; the op is skipped");
      continue;
    }
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->replay_launch != launch_id) {
      c->replay_launch = launch_id;
      ++c->replays;
      c->replay_ops = 0;
    }
    NumberLocked(&op);
    if (!IsOneSided(op.kind)) {
      op.replay = c->replays;
      op.replay_seq = ++c->replay_ops;
    }
    task->ops.push_back(op);
  }
  if (!task->ops.empty()) return task;
  delete task;
  return nullptr;
}

struct CaptureOf {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  cudaGraph_t graph = nullptr;
};

// The capture `op`'s stream is in. A query that fails (the legacy stream while a blocking stream
// captures) counts as no capture: enqueueing then fails the same way, as it does in NCCL.
CaptureOf QueryCapture(const Op& op) {
  CaptureOf out;
  const cudaError_t e = OnDevice(op.stream, op.comm->device, [&] {
    return cudaStreamGetCaptureInfo(op.stream, &out.status, &out.id, &out.graph, nullptr, nullptr, nullptr);
  });
  if (e != cudaSuccess) {
    cudaGetLastError();
    return CaptureOf{};
  }
  return out;
}

ncclResult_t CudaFailure(const char* what, cudaError_t err) {
  SetLastError(std::string(what) + " failed: " + cudaGetErrorString(err));
  return ncclUnhandledCudaError;
}

// Records each stream's ops as a host node of the graph being captured.
ncclResult_t CaptureOps(std::vector<Op> ops, cudaGraph_t graph) {
  static std::once_flag hook_once;
  std::call_once(hook_once, [] { ncclsim_rt_set_host_node_prepare(RunReplay, PrepareReplay); });
  for (auto& group : ByStream(std::move(ops))) {
    const Op first = group.front();
    auto* plan = new GraphPlan{std::move(group), {}};
    for (const Op& op : plan->ops) plan->comm_indexes.push_back(op.comm->index);
    cudaUserObject_t object = nullptr;
    if (cudaError_t e = cudaUserObjectCreate(&object, plan, DeletePlan, 1, cudaUserObjectNoDestructorSync);
        e != cudaSuccess) {
      delete plan;
      return CudaFailure("cudaUserObjectCreate", e);
    }
    if (cudaError_t e = cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove); e != cudaSuccess) {
      cudaUserObjectRelease(object, 1);
      return CudaFailure("cudaGraphRetainUserObject", e);
    }
    const cudaError_t e =
        OnDevice(first.stream, first.comm->device, [&] { return cudaLaunchHostFunc(first.stream, RunReplay, plan); });
    if (e != cudaSuccess) return CudaFailure("cudaLaunchHostFunc", e);
  }
  return ncclSuccess;
}

ncclResult_t Launch(std::vector<Op> ops) {
  if (ops.empty()) return ncclSuccess;
  // Every stream of a group captures into the same graph, or none does (NCCL's rule).
  const CaptureOf capture = QueryCapture(ops.front());
  for (size_t i = 1; i < ops.size(); ++i) {
    const CaptureOf other = QueryCapture(ops[i]);
    if ((other.status == cudaStreamCaptureStatusNone) != (capture.status == cudaStreamCaptureStatusNone) ||
        other.id != capture.id) {
      SetLastError("either none or all of a group's streams must be captured, into the same CUDA graph");
      return ncclInvalidUsage;
    }
  }
  if (capture.status == cudaStreamCaptureStatusInvalidated) {
    return CudaFailure("stream capture", cudaErrorStreamCaptureInvalidated);
  }
  if (capture.status == cudaStreamCaptureStatusActive) return CaptureOps(std::move(ops), capture.graph);
  for (Op& op : ops) {
    std::lock_guard<std::mutex> lock(op.comm->mu);
    NumberLocked(&op);
  }
  Comm* deferred = FirstNonblocking(ops);
  if (deferred == nullptr) {
    ncclResult_t result = ncclSuccess;
    for (StreamTask* t : TasksByStream(std::move(ops))) {
      const ncclResult_t r = EnqueueTask(t);
      if (r != ncclSuccess) result = r;
    }
    return result;
  }
  // Nonblocking: accept now, enqueue shortly after from the worker, as real NCCL does.
  std::vector<Comm*> comms;
  for (const Op& op : ops) comms.push_back(op.comm);
  for (Comm* c : comms) {
    std::lock_guard<std::mutex> lock(c->mu);
    ++c->pending_enqueue;
  }
  PostToWorker(deferred, [ops = std::move(ops), comms]() mutable {
    for (StreamTask* t : TasksByStream(std::move(ops))) EnqueueTask(t);
    for (Comm* c : comms) {
      std::lock_guard<std::mutex> lock(c->mu);
      --c->pending_enqueue;
      c->cv.notify_all();
    }
  });
  return ncclInProgress;
}

ncclResult_t WaitGroupInits(std::vector<Comm*> inits) {
  ncclResult_t result = ncclSuccess;
  for (Comm* c : inits) {
    if (!c->blocking) {
      result = ncclInProgress;
      continue;
    }
    if (c->init_thread.joinable()) c->init_thread.join();
    if (c->init_state.load() != ncclSuccess) result = c->init_state.load();
  }
  return result;
}

}  // namespace

bool NoopMode() {
  static const bool noop = [] {
    const char* v = std::getenv("NCCLSIM_NOOP");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return noop;
}

bool InGroup() { return g_group.depth > 0; }

ncclResult_t SubmitOp(const Op& op) {
  if (NoopMode()) return ncclSuccess;
  if (InGroup()) {
    g_group.ops.push_back(op);
    return ncclSuccess;
  }
  return Launch({op});
}

ncclResult_t GroupStart() {
  ++g_group.depth;
  return ncclSuccess;
}

ncclResult_t GroupEnd() {
  if (g_group.depth == 0) {
    SetLastError("ncclGroupEnd: not in a group (missing ncclGroupStart)");
    return ncclInvalidUsage;
  }
  if (--g_group.depth > 0) return ncclSuccess;
  std::vector<Op> ops = std::move(g_group.ops);
  std::vector<Comm*> inits = std::move(g_group.inits);
  g_group = GroupState{};
  const ncclResult_t init_result = WaitGroupInits(std::move(inits));
  if (init_result != ncclSuccess && init_result != ncclInProgress) return init_result;
  const ncclResult_t launch_result = Launch(std::move(ops));
  return launch_result != ncclSuccess ? launch_result : init_result;
}

ncclResult_t GroupSimulateEnd(ncclSimInfo_t* info) {
  if (info != nullptr && info->magic != 0x74685283) {
    SetLastError("ncclGroupSimulateEnd: simInfo not initialized with NCCL_SIM_INFO_INITIALIZER");
    return ncclInvalidArgument;
  }
  if (g_group.depth == 0) {
    SetLastError("ncclGroupSimulateEnd: not in a group (missing ncclGroupStart)");
    return ncclInvalidUsage;
  }
  if (--g_group.depth > 0) return ncclSuccess;
  // Nothing is launched: a rough cost of 1 us per op plus 10 GB/s.
  double bytes = 0;
  for (const Op& op : g_group.ops)
    bytes += static_cast<double>(op.count) * static_cast<double>(DataTypeSize(op.datatype));
  const size_t nops = g_group.ops.size();
  std::vector<Comm*> inits = std::move(g_group.inits);
  g_group = GroupState{};
  WaitGroupInits(std::move(inits));
  if (info != nullptr) info->estimatedTime = static_cast<float>(nops * 1.0 + bytes / 1e4);
  return ncclSuccess;
}

void AddGroupInit(Comm* c) { g_group.inits.push_back(c); }

void PostToWorker(Comm* c, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(c->mu);
  if (!c->worker.joinable()) {
    c->worker = std::thread([c] {
      std::unique_lock<std::mutex> lk(c->mu);
      for (;;) {
        c->cv.wait(lk, [c] { return c->worker_stop || !c->worker_queue.empty(); });
        if (c->worker_queue.empty()) return;
        auto job = std::move(c->worker_queue.front());
        c->worker_queue.erase(c->worker_queue.begin());
        lk.unlock();
        job();
        lk.lock();
      }
    });
  }
  c->worker_queue.push_back(std::move(fn));
  c->cv.notify_all();
}

void StopWorker(Comm* c) {
  {
    std::lock_guard<std::mutex> lock(c->mu);
    c->worker_stop = true;
    c->cv.notify_all();
  }
  if (c->worker.joinable()) c->worker.join();
}

void WaitIdle(Comm* c) {
  std::unique_lock<std::mutex> lock(c->mu);
  c->cv.wait(lock, [c] { return c->inflight == 0 && c->pending_enqueue == 0; });
}

}  // namespace ncclsim
