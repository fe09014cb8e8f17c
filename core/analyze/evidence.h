// The evidence sections of an analysis, built from the communicator the verdict is about.
#ifndef NCCLWATCH_CORE_ANALYZE_EVIDENCE_H_
#define NCCLWATCH_CORE_ANALYZE_EVIDENCE_H_

#include <cstdint>
#include <vector>

#include "core/analyze/analysis.h"
#include "core/analyze/comm_table.h"

namespace ncclwatch::analyze {

// Every rank of the communicator, with or without a dump, as it stands at collective #seq
// (the verdict's). States:
//   "no dump", "init not done", "not joined #S", "waiting in #S", "completed #S"; "waiting in
//   #S issued at FILE:LINE in FUNC" when the dump has #S's call site (NCCLWATCH_CALL_SITES=1); with no
//   collective number (seq 0: init_hang, p2p_*, whose numbers count per peer), "in flight" or "idle".
// With a CUDA graph's key (`graph` != 0), `seq` is a replay of it: "not launched replay S",
// "waiting in replay S", "completed replay S", and each rank's replays of that graph.
std::vector<RankRow> BuildRankRows(const CommTable& table, uint64_t seq, uint64_t graph);

// The collectives from #seq-2 to #seq+2, one cell per rank with a dump.
std::vector<FingerprintRow> BuildFingerprints(const CommTable& table, uint64_t seq);

// The stacks of the given processes, culprits in the order given; processes whose
// user frames are identical share one group. At most `max_groups` groups.
std::vector<StackGroup> BuildStackGroups(const std::vector<std::pair<int, const dump::RankDump*>>& culprits,
                                         size_t max_groups);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_EVIDENCE_H_
