// Which job and which rank a process belongs to, from the launcher's environment.
//
// Job id: the first set (non-empty) of NCCLWATCH_JOB_ID, TORCHELASTIC_RUN_ID, SLURM_JOB_ID,
// or "MASTER_ADDR:MASTER_PORT" (both needed); otherwise "default". Returned sanitized.
// Rank: RANK (+ LOCAL_RANK, WORLD_SIZE) as set by torchrun, else SLURM_PROCID (+
// SLURM_LOCALID, SLURM_NTASKS), else OMPI_COMM_WORLD_RANK (+ OMPI_COMM_WORLD_LOCAL_RANK,
// OMPI_COMM_WORLD_SIZE); otherwise unknown (-1), to be taken from the communicators.
#ifndef NCCLWATCH_CORE_SHM_JOB_IDENTITY_H_
#define NCCLWATCH_CORE_SHM_JOB_IDENTITY_H_

#include <functional>
#include <string>

#include "core/shm/layout.h"

namespace ncclwatch::shm {

// Returns the value of an environment variable, or nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;
EnvLookup ProcessEnvironment();

std::string JobIdFromEnvironment(const EnvLookup& env);

struct RankIdentity {
  int global_rank = -1;
  int local_rank = -1;
  int world_size = -1;
  RankSource source = RankSource::kUnknown;
};
RankIdentity RankFromEnvironment(const EnvLookup& env);

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_JOB_IDENTITY_H_
