// Offline producer of the job model: every dump of a job, as detect::JobFacts with
// Scope::kJob, for the one classifier (core/detect/detector.h). The live producer is
// core/watch/facts_from_snapshot.h; both fill the same fields the same way, so the same
// state of a job gets the same verdict live and offline.
#ifndef NCCLWATCH_CORE_ANALYZE_FACTS_FROM_DUMPS_H_
#define NCCLWATCH_CORE_ANALYZE_FACTS_FROM_DUMPS_H_

#include <string>
#include <vector>

#include "core/detect/facts.h"
#include "core/dump/dump.h"

namespace ncclwatch::analyze {

// One ProcessFacts per dump, in the order given (processes[i] comes from dumps[i]).
// Collectives are kept in ascending #N, the first record of a number only; P2P ops
// (detect/p2p_op.h, the live producer's predicate) go to p2p_records; completion is
// detect::EffectiveLastCompleted over the dump's counter and records, as live.
detect::JobFacts FactsFromDumps(const std::vector<const dump::RankDump*>& dumps);

// The rank's completion as the live producer computes it (detect/completion.h).
uint64_t EffectiveLastCompleted(const dump::CommDump& comm);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_FACTS_FROM_DUMPS_H_
