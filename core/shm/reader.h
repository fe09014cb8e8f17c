// Lock-free reader of ncclwatch segments. Never blocks or disturbs the writers; a record
// being rewritten during the read is retried a few times and then left out.
#ifndef NCCLWATCH_CORE_SHM_READER_H_
#define NCCLWATCH_CORE_SHM_READER_H_

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/shm/snapshot.h"

namespace ncclwatch::shm {

// Reads one segment by its /dev/shm entry name, keeping at most the newest
// `max_records_per_comm` ring records of each communicator. nullopt when it is not (yet) a
// valid ncclwatch segment of this layout version.
std::optional<ProcessView> ReadSegment(const std::string& entry_name, size_t max_records_per_comm = SIZE_MAX);

// Every segment of `job_id` (sanitized) owned by `uid` on this host. A poller that needs only
// recent history passes a small `max_records_per_comm`: copying whole rings is most of a
// read's cost.
JobSnapshot ReadJobSnapshot(const std::string& job_id, uid_t uid = getuid(),
                            size_t max_records_per_comm = SIZE_MAX);

// Job ids that have at least one segment of `uid` on this host, sorted.
std::vector<std::string> ListJobIds(uid_t uid = getuid());

// Unlinks the segments of `job_id` whose owner process is gone (crashed or killed).
// Returns how many were removed.
int RemoveStaleSegments(const std::string& job_id, uid_t uid = getuid());

// Unlinks every segment of every job of `uid` other than `keep_job_id` in which no process is
// alive any more: what killed jobs left behind (SIGTERM/SIGKILL skip the clean-exit removal).
// A job with any live process is left whole, since its watchdogs need the dead ranks'
// segments to blame them. Returns how many segments were removed.
int RemoveDeadJobs(const std::string& keep_job_id, uid_t uid = getuid());

// Unlinks the segments of `job_id` of every run other than `keep_run_key` (run_identity.h)
// in which no process is alive: what earlier launches under the same job id left (torchrun's
// "none"). A run with a live process is left whole (its watchdogs need its dead ranks'
// segments). Returns how many were removed.
int RemoveDeadRuns(const std::string& job_id, uint64_t keep_run_key, uid_t uid = getuid());

// Unlinks every segment of `job_id` when none of its processes is live any more (a process is
// live while its pid runs and it has not recorded its exit, SegmentState::kExited). Called by
// each process at exit after recording its own exit: of processes exiting together, at
// least one sees all the others' marks (each stores its mark seq_cst before scanning), so a
// healthy job leaves nothing behind. Returns how many were removed (0 while a process lives).
int RemoveJobIfEnded(const std::string& job_id, uid_t uid = getuid());
// The same, over the segments of one run (run_identity.h) only: what each process calls at
// exit, so that a run beside it under the same job id neither keeps its segments alive nor
// loses its own. run_key 0: every run (RemoveJobIfEnded).
int RemoveRunIfEnded(const std::string& job_id, uint64_t run_key, uid_t uid = getuid());

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_READER_H_
