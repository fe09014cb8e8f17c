#include "preload/observe/graph_observer.h"

#include <vector>

#include "core/clock/stamp_clock.h"
#include "core/shm/record_flags.h"
#include "preload/observe/nccl_observer_internal.h"
#include "preload/real/driver_api.h"

namespace ncclwatch::preload {
namespace {

// The replay of part `i`, on the counter it took its number from: given back when nothing else
// took a number since (a failed launch, or one captured into another graph, is no replay).
void TakeBack(const GraphLaunchCall& call, int i, uint32_t flags) {
  const GraphPart& part = call.graph->part[i];
  part.comm->slot.AddReplayFlags(call.ring_index[i], flags);
  uint64_t expected = call.replay[i];
  part.launches->compare_exchange_strong(expected, call.replay[i] - 1, std::memory_order_relaxed);
}

// One event per kReplayTargetsPerEvent communicators: one for every graph on up to four.
void TrackLaunch(Runtime* rt, const GraphLaunchCall& call) {
  const ExecGraph& graph = *call.graph;
  for (int first = 0; first < graph.parts; first += kReplayTargetsPerEvent) {
    ReplayTargets targets;
    for (int i = first; i < graph.parts && targets.count < kReplayTargetsPerEvent; ++i) {
      targets.target[targets.count++] = {&graph.part[i].comm->slot, call.ring_index[i], 0};
    }
    uint32_t flags = shm::kRecordUntracked;
    if (rt->tracker) flags = rt->tracker->RecordReplayCompletion(graph.device, call.stream, targets);
    for (int i = first; i < first + targets.count; ++i) {
      if (flags == shm::kRecordCaptured) {
        TakeBack(call, i, shm::kRecordNotLaunched);  // launched into a capture: recorded, not run
      } else if (flags != 0) {
        graph.part[i].comm->slot.AddReplayFlags(call.ring_index[i], flags);
      }
    }
  }
}

}  // namespace

void NoteCapturedRecords(Runtime* rt, const StreamRange& records) noexcept {
  Guarded("NoteCapturedRecords", [&] {
    records.comm->slot.WithdrawLaunches(records.range.first_ring_index, records.range.last_ring_index);
    uint64_t capture_id = 0;
    CUgraph graph = nullptr;
    if (!rt->driver_resolved || !rt->driver.CaptureGraph(DriverStream(records.stream), &capture_id, &graph)) return;
    std::vector<CapturedOp> ops;
    for (uint64_t index = records.range.first_ring_index; index <= records.range.last_ring_index; ++index) {
      CapturedOp op;
      shm::RecordRef ref;
      uint32_t flags = 0;
      if (!records.comm->slot.ReadOwnRecord(index, &op.fingerprint, &ref, &op.framework_seq, &flags)) continue;
      if ((flags & shm::kRecordFailed) != 0) continue;  // refused by NCCL: not in the graph
      op.fingerprint.stream = 0;
      op.seq = ref.collective ? ref.seq : 0;
      ops.push_back(op);
    }
    if (!ops.empty()) {
      rt->graphs.AddCaptured(reinterpret_cast<uint64_t>(graph), capture_id, records.comm, ops.data(), ops.size());
    }
  });
}

void ObserveGraphInstantiated(uint64_t exec, uint64_t graph) noexcept {
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr || PassThroughOnly()) return;
  Guarded("ObserveGraphInstantiated", [&] { rt->graphs.Instantiated(exec, graph); });
}

void ObserveGraphDestroyed(uint64_t graph) noexcept {
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr || PassThroughOnly()) return;
  Guarded("ObserveGraphDestroyed", [&] { rt->graphs.ForgetGraph(graph); });
}

void ObserveGraphExecDestroyed(uint64_t exec) noexcept {
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr || PassThroughOnly()) return;
  Guarded("ObserveGraphExecDestroyed", [&] { rt->graphs.ForgetExec(exec); });
}

bool BeginGraphLaunch(uint64_t exec, uint64_t stream, GraphLaunchCall* call) noexcept {
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr) return false;
  const ExecGraph* graph = rt->graphs.Find(exec);
  if (graph == nullptr) return false;
  HookDepths& depths = ThisThreadDepths();
  if (depths.in_graph_launch || PassThroughOnly()) return false;
  depths.in_graph_launch = true;
  call->runtime = rt;
  call->graph = graph;
  call->stream = stream;
  const uint64_t now = clock::StampNowNs();
  for (int i = 0; i < graph->parts; ++i) {
    const GraphPart& part = graph->part[i];
    shm::ReplayEntry entry = part.replay;
    entry.replay = part.launches->fetch_add(1, std::memory_order_relaxed) + 1;
    entry.stream = stream;
    call->replay[i] = entry.replay;
    call->ring_index[i] = part.comm->slot.AppendReplay(entry, now);
  }
  return true;
}

void EndGraphLaunch(GraphLaunchCall* call, bool launched) noexcept {
  ThisThreadDepths().in_graph_launch = false;
  Guarded("EndGraphLaunch", [&] {
    if (launched) {
      TrackLaunch(call->runtime, *call);
      return;
    }
    for (int i = 0; i < call->graph->parts; ++i) TakeBack(*call, i, shm::kRecordFailed);
  });
}

}  // namespace ncclwatch::preload
