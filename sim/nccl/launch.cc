#include "launch.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

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

// cudaLaunchHostFunc on the op's device when the stream handle depends on the current device.
// The task may run and be freed before cudaLaunchHostFunc returns: nothing of it is read after.
cudaError_t LaunchOnDevice(cudaStream_t stream, int device, StreamTask* task) {
  if (!IsDeviceDefaultStream(stream)) return cudaLaunchHostFunc(stream, RunTask, task);
  int current = 0;
  cudaGetDevice(&current);
  if (current != device) cudaSetDevice(device);
  const cudaError_t err = cudaLaunchHostFunc(stream, RunTask, task);
  if (current != device) cudaSetDevice(current);
  return err;
}

ncclResult_t EnqueueTask(StreamTask* task) {
  std::vector<Comm*> comms;
  for (const Op& op : task->ops) comms.push_back(op.comm);
  const Op& first = task->ops.front();
  const cudaError_t err = LaunchOnDevice(first.stream, first.comm->device, task);
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
std::vector<StreamTask*> TasksByStream(std::vector<Op> ops) {
  std::vector<StreamTask*> tasks;
  std::map<std::pair<cudaStream_t, int>, StreamTask*> by_stream;
  for (Op& op : ops) {
    const int device = IsDeviceDefaultStream(op.stream) ? op.comm->device : -1;
    StreamTask*& t = by_stream[{op.stream, device}];
    if (t == nullptr) {
      t = new StreamTask;
      tasks.push_back(t);
    }
    t->ops.push_back(op);
  }
  return tasks;
}

// True when `stream` is being captured into a CUDA graph. A legacy-stream query that fails
// because another stream captures globally counts as not capturing: the op then runs.
bool StreamIsCapturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return status != cudaStreamCaptureStatusNone;
}

ncclResult_t Launch(std::vector<Op> ops) {
  // An op on a capturing stream belongs to the graph, as with real NCCL. The sim's graphs
  // replay nothing, so such an op takes no turn in its communicator's order: otherwise every
  // later op of the communicator would wait for it forever.
  std::erase_if(ops, [](const Op& op) { return StreamIsCapturing(op.stream); });
  if (ops.empty()) return ncclSuccess;
  for (Op& op : ops) {
    std::lock_guard<std::mutex> lock(op.comm->mu);
    ++op.comm->inflight;
    if (IsCollective(op.kind)) op.ticket = op.comm->next_ticket++;
    if (!IsOneSided(op.kind)) op.seq = ++op.comm->issued_ops;
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
