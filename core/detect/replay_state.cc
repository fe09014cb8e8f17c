#include "core/detect/replay_state.h"

#include <algorithm>

#include "core/format/hex.h"

namespace ncclwatch::detect {
namespace {

bool SeenComplete(const ReplayFacts& r) { return r.complete_ns != 0 && !r.untracked && !r.failed; }

}  // namespace

ReplayProgress ProgressOf(const CommFacts& comm, uint64_t graph) {
  ReplayProgress progress;
  progress.graph = graph;
  bool any = false;
  for (const ReplayFacts& r : comm.replays) {
    if (r.graph != graph) continue;
    any = true;
    if (r.failed) continue;
    if (progress.newest == nullptr || r.replay > progress.newest->replay) progress.newest = &r;
    progress.launched = std::max(progress.launched, r.replay);
    if (SeenComplete(r)) progress.completed = std::max(progress.completed, r.replay);
  }
  progress.known = any || comm.replays_dropped == 0;
  if (!comm.judged() || comm.left()) return progress;
  for (const ReplayFacts& r : comm.replays) {
    if (r.graph != graph || r.failed || r.untracked || r.replay <= progress.completed) continue;
    if (progress.pending == nullptr || r.replay < progress.pending->replay) progress.pending = &r;
  }
  return progress;
}

std::vector<uint64_t> GraphsOf(const CommFacts& comm) {
  std::vector<const ReplayFacts*> by_launch;
  for (const ReplayFacts& r : comm.replays) by_launch.push_back(&r);
  std::stable_sort(by_launch.begin(), by_launch.end(),
                   [](const ReplayFacts* a, const ReplayFacts* b) { return a->enqueue_ns < b->enqueue_ns; });
  std::vector<uint64_t> graphs;
  for (const ReplayFacts* r : by_launch) {
    if (std::find(graphs.begin(), graphs.end(), r->graph) == graphs.end()) graphs.push_back(r->graph);
  }
  return graphs;
}

const ReplayFacts* FindReplay(const CommFacts& comm, uint64_t graph, uint64_t replay) {
  for (const ReplayFacts& r : comm.replays) {
    if (r.graph == graph && r.replay == replay && !r.failed) return &r;
  }
  return nullptr;
}

const ReplayFacts* OldestPendingReplay(const CommFacts& comm) {
  const ReplayFacts* oldest = nullptr;
  for (const uint64_t graph : GraphsOf(comm)) {
    const ReplayFacts* pending = ProgressOf(comm, graph).pending;
    if (pending != nullptr && (oldest == nullptr || pending->enqueue_ns < oldest->enqueue_ns)) oldest = pending;
  }
  return oldest;
}

std::string GraphOpsText(const ReplayFacts& replay) {
  std::string ops;
  for (size_t i = 0; i < replay.op_names.size();) {
    size_t run = 1;
    while (i + run < replay.op_names.size() && replay.op_names[i + run] == replay.op_names[i]) ++run;
    if (!ops.empty()) ops += ", ";
    ops += replay.op_names[i] + (run > 1 ? " x" + std::to_string(run) : "");
    i += run;
  }
  if (replay.ops > replay.op_names.size()) {
    ops += (ops.empty() ? "" : ", ") + std::to_string(replay.ops - replay.op_names.size()) + " more";
  }
  if (ops.empty()) ops = "ops";
  return ops + (replay.first_seq != 0 ? " from #" + std::to_string(replay.first_seq) : "");
}

std::string GraphLabel(const ReplayFacts& replay, uint64_t comm_hash) {
  return "graph [" + GraphOpsText(replay) + " on comm " + format::FormatHex(comm_hash) + "]";
}

}  // namespace ncclwatch::detect
