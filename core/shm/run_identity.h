// Which segments of a job id belong to one run (one launch of the job) on this host.
//
// Why: job ids repeat. torchrun sets TORCHELASTIC_RUN_ID=none unless --rdzv-id is given, and
// MASTER_ADDR:MASTER_PORT is 127.0.0.1:29500 by default, so every torchrun job of a user on a
// host gets the same job id. Judged by job id alone, the segments a killed run left, or those
// of a second job running beside this one, would be read as ranks of this job: false
// straggler and mismatch verdicts about communicators this process never belonged to.
//
// How:
//  * Every launcher we know starts the ranks of one host as children of one process
//    (torchrun's agent, mpirun or orted, slurmstepd, a shell loop). A run's key hashes that
//    parent's identity: boot id, pid and start time, which no later process can share even
//    when its pid is recycled. Each segment publishes it (SegmentHeader::run_key).
//  * Ranks that a wrapper process separates (each with a parent of its own) are joined by
//    their communicators: processes that share a communicator hash (drawn from the 128 random
//    bytes of ncclGetUniqueId, so distinct per run) are of one run, transitively.
// A process whose communicators are all still unhashed and whose parent differs is therefore
// judged apart until its first communicator is known: a missed verdict, never a false one.
#ifndef NCCLWATCH_CORE_SHM_RUN_IDENTITY_H_
#define NCCLWATCH_CORE_SHM_RUN_IDENTITY_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "core/shm/snapshot.h"

namespace ncclwatch::shm {

// The key of the run a process with this parent belongs to; never 0.
uint64_t RunKeyOf(const std::string& boot_id, pid_t parent_pid, uint64_t parent_start_ticks);

// This process's run key (its parent at the time of the call).
uint64_t ThisProcessRunKey();

// Removes from `snapshot` every process that is not of the run of `self` (by run key, then
// joined through shared communicator hashes). Leaves the snapshot whole when `self` is not
// in it: with no own segment there is nothing to judge the others by.
void KeepRunOf(pid_t self, JobSnapshot* snapshot);

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_RUN_IDENTITY_H_
