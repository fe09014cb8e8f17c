// Remediation hints for the known field causes of NCCL hangs. A hint is emitted only with
// evidence from the dumps that ties it to this incident; each hint lists that evidence, and
// the absence of something (a variable nobody set, a driver no dump names) is never evidence.
//   absent_ranks           any verdict blaming ranks that left no dump (no dump of them from any
//                          peer either): their host stopped or never started them. First: no
//                          setting explains a rank that is not there
//   p2p_transport          collective_hang (every rank in #S, none completes), p2p_hang (both
//                          sides of a pair posted, neither completes)
//   data_loading           straggler or p2p_straggler whose innermost user frames are in data loading
//   broadcast_divergence   mismatch where a Broadcast is issued by only some ranks
//   collective_divergence  any other mismatch
//   init_transport         init_hang
//   crash                  rank_exited where an exited rank died by a signal, with a non-zero
//                          status, or without recording an exit (killed)
//   uneven_inputs          rank_exited after clean exits whose calls end on a whole repeating
//                          step (after a prologue): the ranks ran different step counts
//   partial_collective     any other rank_exited: the exited ranks stopped inside their step,
//                          a collective only some ranks issue (a rank-0-only forward with
//                          broadcast_buffers, field report 5)
//   old_kernel             any verdict, on a host with a kernel older than 5.5
#ifndef NCCLWATCH_CORE_ANALYZE_HINTS_H_
#define NCCLWATCH_CORE_ANALYZE_HINTS_H_

#include <utility>
#include <vector>

#include "core/analyze/analysis.h"
#include "core/analyze/comm_table.h"
#include "core/dump/dump.h"

namespace ncclwatch::analyze {

struct HintInput {
  const detect::Verdict* verdict = nullptr;
  const CommTable* table = nullptr;  // the verdict's communicator; nullptr for sync_stuck and none
  std::vector<std::pair<int, const dump::RankDump*>> culprits;  // culprit rank -> its dump
  std::vector<const dump::RankDump*> dumps;                     // every dump analysed
  const std::vector<FingerprintRow>* fingerprints = nullptr;
};

std::vector<Hint> BuildHints(const HintInput& input);

// True for kernel releases such as "5.4.0-150-generic" (older than 5.5).
bool KernelOlderThan5_5(const std::string& release);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_HINTS_H_
