// How far one rank's collectives are complete: the one computation shared by the live
// watchdog (shm snapshot -> JobFacts) and `ncclwatch analyze` (dumps), so both judge the
// same rank as waiting or done.
#ifndef NCCLWATCH_CORE_DETECT_COMPLETION_H_
#define NCCLWATCH_CORE_DETECT_COMPLETION_H_

#include <cstdint>
#include <vector>

#include "core/detect/facts.h"

namespace ncclwatch::detect {

// The highest #N to count as complete on one rank, given the counter the rank published and
// its recent records (collectives only, any order). Completion events fire in stream order,
// so any record seen complete raises the answer to its #N; a record that owes no completion
// (never_completes: captured or failed) right after the answer counts as complete too, or it
// would look pending forever. An untracked record never does: its completion is unknown.
uint64_t EffectiveLastCompleted(uint64_t published_last_completed,
                                const std::vector<RecordFacts>& records);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_COMPLETION_H_
