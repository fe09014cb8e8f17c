// The hang detector: classifies every communicator of one host from a snapshot view.
//
// Pure function of its inputs: no clock, no I/O. Call it once per poll with the current
// CLOCK_MONOTONIC time; feed the result to an IncidentTracker to act once per incident.
//
// At most one verdict per communicator, the most important that applies:
//   mismatch > rank_exited > init_hang > straggler > collective_hang,
// except that a collective_hang at an earlier #N than a straggler wins (the laggers are
// stuck behind it). Plus at most one sync_stuck per process that has no communicator
// verdict. Healthy states (in-flight but young, or jitter below the threshold) yield
// nothing. Rules in detail: core/detect/README.md.
#ifndef NCCLWATCH_CORE_DETECT_DETECTOR_H_
#define NCCLWATCH_CORE_DETECT_DETECTOR_H_

#include <cstdint>
#include <vector>

#include "core/detect/detect_config.h"
#include "core/detect/host_view.h"
#include "core/detect/verdict.h"

namespace ncclwatch::detect {

// Verdicts ordered by priority, then comm_hash, then subject_pid.
std::vector<Verdict> Classify(const HostView& view, const DetectConfig& config, uint64_t now_ns);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_DETECTOR_H_
