// The one classifier: judges every communicator of the job model (facts.h). The live
// watchdog calls it on one host's facts (Scope::kHost) once per poll with the current
// CLOCK_MONOTONIC time and feeds the result to an IncidentTracker; `ncclwatch analyze`
// calls it on the facts of every dump (Scope::kJob) and reports the first verdict.
//
// Pure function of its inputs: no clock, no I/O.
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
#include "core/detect/facts.h"
#include "core/detect/verdict.h"

namespace ncclwatch::detect {

// Verdicts ordered by priority, then larger nranks, then comm_hash, then subject_pid.
// `now_ns` is ignored for Scope::kJob.
std::vector<Verdict> Classify(const JobFacts& facts, const DetectConfig& config, uint64_t now_ns);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_DETECTOR_H_
