// Which rank of the job a process is, and in which attempt, as its launcher said (read by
// core/settings from RANK/LOCAL_RANK/WORLD_SIZE, SLURM_* or OMPI_COMM_WORLD_*, and
// TORCHELASTIC_RESTART_COUNT / SLURM_RESTART_COUNT), published in the segment header.
#ifndef NCCLWATCH_CORE_SHM_JOB_IDENTITY_H_
#define NCCLWATCH_CORE_SHM_JOB_IDENTITY_H_

#include "core/shm/layout.h"

namespace ncclwatch::shm {

// -1: unknown (no launcher variable), to be taken from the communicators.
struct RankIdentity {
  int global_rank = -1;
  int local_rank = -1;
  int world_size = -1;
  RankSource source = RankSource::kUnknown;
  // The launcher's attempt: TORCHELASTIC_RESTART_COUNT, SLURM_RESTART_COUNT; -1 when not given.
  int restart_count = -1;
  int requeue_count = -1;
  // TORCHELASTIC_MAX_RESTARTS (not published): whether a failure may be followed by another
  // attempt of the same run.
  int max_restarts = -1;

  bool MayRestart() const { return restart_count >= 0 && max_restarts > restart_count; }
};

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_JOB_IDENTITY_H_
