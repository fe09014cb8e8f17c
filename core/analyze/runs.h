// Which dumps belong together: the runs (launches) of a job and the attempts of each run.
//
// Why: one dump directory collects whatever was written into it. A torchrun restart keeps its
// run and starts an attempt (TORCHELASTIC_RESTART_COUNT), a SLURM requeue another one
// (SLURM_RESTART_COUNT), a plain rerun into the same directory is another run, and two jobs
// with torchrun's defaults share a job id ("none"). Merged, their dumps read as one job whose
// processes disagree: the verdict of one run is hidden by, or blamed on, another.
//
// How, from what each dump says (core/dump/README.md):
//  * dumps of one run share a launcher on each host (incident.run_key: its identity hashed,
//    core/shm/run_identity.h) and communicators across hosts (a commHash is drawn from a unique
//    id's random bytes: no two launches share one) and incident ids (each names a comm hash, or
//    a pid and its onset in ns: core/watch/incident_id.h), transitively;
//  * runs with one job id whose SLURM requeue counts differ are one run (a requeue starts the
//    job step anew, with a new launcher and new communicators, under the same SLURM_JOB_ID);
//  * within a run, the attempt is the dump's process.attempt (requeue, then restart), -1
//    counting before 0: dumps that name none are one attempt.
#ifndef NCCLWATCH_CORE_ANALYZE_RUNS_H_
#define NCCLWATCH_CORE_ANALYZE_RUNS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/detect/facts.h"
#include "core/dump/dump_reader.h"

namespace ncclwatch::analyze {

struct AttemptDumps {
  detect::Attempt attempt;
  std::vector<const dump::LoadedDump*> dumps;  // in path order
  uint64_t first_unix_ns = 0;                  // earliest and latest detection, wall clock
  uint64_t last_unix_ns = 0;
};

struct RunDumps {
  std::vector<AttemptDumps> attempts;  // earliest attempt first
  std::vector<std::string> hosts;      // sorted
  std::vector<std::string> job_ids;    // sorted, non-empty ones
  uint64_t first_unix_ns = 0;
  uint64_t last_unix_ns = 0;
};

// The runs of `set`, the most recent (latest detection) first. Linear in the dumps and their
// communicators, up to a log factor.
std::vector<RunDumps> GroupRuns(const dump::DumpSet& set);

// "attempt 1", "attempt 0 of requeue 2", "requeue 1", "" when the launcher numbered none.
std::string AttemptLabel(const detect::Attempt& attempt);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_RUNS_H_
