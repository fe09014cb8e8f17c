// Offline producer of the job model: every dump of a job, as detect::JobFacts with
// Scope::kJob, for the one classifier (core/detect/detector.h). A dump already holds the
// model's types (core/dump/dump.h), as the live producer (core/watch/facts_from_snapshot.h)
// filled them; this only guards against what a file may hold that the watchdog never writes,
// so the same state of a job gets the same verdict live and offline.
#ifndef NCCLWATCH_CORE_ANALYZE_FACTS_FROM_DUMPS_H_
#define NCCLWATCH_CORE_ANALYZE_FACTS_FROM_DUMPS_H_

#include <vector>

#include "core/detect/facts.h"
#include "core/dump/dump.h"

namespace ncclwatch::analyze {

// One ProcessFacts per dump, in the order given (processes[i] comes from dumps[i]).
// Collectives are kept in ascending #N, the first record of a number only, with no peer;
// P2P ops the first of each (direction, peer, number), the newest kMaxP2PRecordsPerComm;
// idle host-sync slots are dropped. Completion is detect::EffectiveLastCompleted over the
// dump's counter and records, as live: the one place analyze computes it (the evidence reads
// it from these facts).
// `as_at_abort[i]` (when given) judges processes[i] as its communicators stood when they were
// aborted or revoked (detect::AsAtAbort): a teardown snapshot (attempt_snapshot.h), in which
// the ops an abort ended were stuck, not done.
detect::JobFacts FactsFromDumps(const std::vector<const dump::RankDump*>& dumps,
                                const std::vector<bool>& as_at_abort = {});

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_FACTS_FROM_DUMPS_H_
