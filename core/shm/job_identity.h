// Which rank of the job a process is, as its launcher said (read by core/settings from
// RANK/LOCAL_RANK/WORLD_SIZE, SLURM_* or OMPI_COMM_WORLD_*), published in the segment header.
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
};

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_JOB_IDENTITY_H_
