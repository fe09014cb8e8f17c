// What the hooks publish about CUDA graphs (the graph rows of hooks/cuda_api_table.h): the NCCL
// ops captured into each graph (graph_registry.h), and one replay record per communicator at
// each launch of an executable graph that holds them (core/shm/layout.h, ReplayRecord), whose
// completion one event recorded after the launch tracks.
//
// The launch costs one registry lookup for a graph without NCCL ops; for one with them, a
// clock read, a replay record per communicator and the event record (Tracker::
// RecordReplayCompletion): the one CUDA call. None of these throw; an internal failure
// disables ncclwatch for the process.
#ifndef NCCLWATCH_PRELOAD_OBSERVE_GRAPH_OBSERVER_H_
#define NCCLWATCH_PRELOAD_OBSERVE_GRAPH_OBSERVER_H_

#include <cstdint>

#include "preload/observe/graph_registry.h"
#include "preload/observe/record_range.h"

namespace ncclwatch::preload {

struct Runtime;

// Records of one op or group range that the tracker found captured (kRecordCaptured): noted
// under the graph their capture records into. Called from the op's settle.
void NoteCapturedRecords(Runtime* rt, const StreamRange& records) noexcept;

// After a successful cudaGraphInstantiate* / cuGraphInstantiate* (or an exec update):
// `exec` replays what `graph` holds.
void ObserveGraphInstantiated(uint64_t exec, uint64_t graph) noexcept;
// After a successful cudaGraphDestroy / cuGraphDestroy, cudaGraphExecDestroy / cuGraphExecDestroy.
void ObserveGraphDestroyed(uint64_t graph) noexcept;
void ObserveGraphExecDestroyed(uint64_t exec) noexcept;

// A launch of `exec` on `stream` (the per-thread default stream already resolved: 0x2).
struct GraphLaunchCall {
  Runtime* runtime;
  const ExecGraph* graph;
  uint64_t stream;
  uint64_t replay[kMaxCommsPerGraph];
  uint64_t ring_index[kMaxCommsPerGraph];
};
// Before the real call: false (nothing to do after it) when the graph holds no NCCL op we
// know of, or ncclwatch is not active; else its replays are published, not complete.
bool BeginGraphLaunch(uint64_t exec, uint64_t stream, GraphLaunchCall* call) noexcept;
// After it: the completion event when `launched`, else the replays are flagged failed and
// their numbers given back.
void EndGraphLaunch(GraphLaunchCall* call, bool launched) noexcept;

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_GRAPH_OBSERVER_H_
