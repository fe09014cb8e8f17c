// Where one rank stands in the replays of a CUDA graph on a communicator: the one judgement of
// a replay's completion, read by the replay rules, pending.h (last gasp, status) and the
// resolution of replay incidents.
//
// A replay is complete when its completion was seen, or when a later replay of the same graph
// was: launches of one graph run in order on the GPU, as CUDA runs an executable graph's
// launches one after another and NCCL runs a communicator's ops in the order they were issued.
// A failed launch ran nothing and owes nothing; an untracked or aborted one is unknown: never
// complete, and no wait.
#ifndef NCCLWATCH_CORE_DETECT_REPLAY_STATE_H_
#define NCCLWATCH_CORE_DETECT_REPLAY_STATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/detect/facts.h"

namespace ncclwatch::detect {

struct ReplayProgress {
  uint64_t graph = 0;
  // `launched` is exact: a replay of the graph is among the kept records (they are the
  // newest), or none was dropped. Otherwise the rank may have launched it long ago.
  bool known = false;
  uint64_t launched = 0;   // highest replay number launched (failed launches left out)
  uint64_t completed = 0;  // highest replay number known complete
  const ReplayFacts* pending = nullptr;  // the oldest tracked replay launched and not known complete
  const ReplayFacts* newest = nullptr;   // the record of the newest launch, nullptr when none kept
};

ReplayProgress ProgressOf(const CommFacts& comm, uint64_t graph);

// The graphs `comm` replayed, in the order of their first kept launch.
std::vector<uint64_t> GraphsOf(const CommFacts& comm);

// The record of replay `replay` of `graph`, nullptr when not kept.
const ReplayFacts* FindReplay(const CommFacts& comm, uint64_t graph, uint64_t replay);

// The oldest replay this rank waits in (launched, tracked, not known complete), over every
// graph; nullptr when none (or the communicator is not judged, or was left).
const ReplayFacts* OldestPendingReplay(const CommFacts& comm);

// "graph [AllReduce x2, Broadcast from #4 on comm 0x...]": the graph's ops on the communicator
// as this rank captured them, its first collective's #N, and the communicator.
std::string GraphLabel(const ReplayFacts& replay, uint64_t comm_hash);
// The same without the communicator, where a row already names it: "AllReduce x2 from #4".
std::string GraphOpsText(const ReplayFacts& replay);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_REPLAY_STATE_H_
