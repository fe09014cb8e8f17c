// How often a communicator issues collectives, and the stall thresholds derived from it.
#ifndef NCCLWATCH_CORE_DETECT_CADENCE_H_
#define NCCLWATCH_CORE_DETECT_CADENCE_H_

#include <cstdint>
#include <vector>

#include "core/detect/comm_group.h"
#include "core/detect/detect_config.h"
#include "core/detect/facts.h"

namespace ncclwatch::detect {

// Gaps between the enqueue times of consecutive collectives (#N-1 -> #N) of one rank,
// from its kept records. Records missing a time are skipped.
std::vector<uint64_t> EnqueueIntervals(const CommFacts& comm);

// The q-quantile (0..1, nearest rank) of `values`; 0 when empty.
uint64_t Quantile(std::vector<uint64_t> values, double q);

// The threshold for straggler / collective_hang on `group`: the configured one, or the
// adaptive one (see DetectConfig::adaptive) when enabled and enough history exists.
uint64_t StallThresholdFor(const CommGroup& group, const DetectConfig& config);

// The stricter threshold for a rank alone on this host:
// max(base, lone_rank_factor x median interval), or base without enough history.
uint64_t LoneRankThreshold(const CommFacts& comm, uint64_t base, const DetectConfig& config);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_CADENCE_H_
