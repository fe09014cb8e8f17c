// Garbage collection of ncclwatch segments: who removes a /dev/shm segment, and when.
//
// Contract (every function below keeps it):
// - Only `uid`'s entries named as segments (segment_name.h) are candidates, and a file is
//   removed only when SegmentFile::Open accepts its inode (regular file, owned by our euid,
//   mode 0600) or finds it incomplete (what a segment looks like while its owner creates it,
//   or after its owner died during creation). A file of another owner or mode is never
//   unlinked, whatever its name; it is reported once (WarnAboutSegmentOnce).
// - A segment is judged by its name (pid + start ticks, so a reused pid does not count) and,
//   where it has one, by its header: the boot it was written in and its exit mark
//   (SegmentState::kExited). A process is *running* while that pid + start time runs; it is
//   *live* while it runs, in the header's boot, and has not recorded its exit.
// - Nothing is removed while a process that may still need it lives: a watchdog blames dead
//   ranks from their segments, so a job (or run) with any live process is left whole.
// - Each segment is opened at most once per call of a removal function.
// - Never blocks: directory listing, one open and two header reads per candidate, unlink.
//   Returns the number of segments unlinked; failures to unlink (someone else removed it
//   first) are not counted and not reported.
#ifndef NCCLWATCH_CORE_SHM_SEGMENT_GC_H_
#define NCCLWATCH_CORE_SHM_SEGMENT_GC_H_

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace ncclwatch::shm {

// Unlinks the segments of `job_id` whose owner process is gone (crashed or killed), judged by
// name alone, so that a segment whose header was never completed is collected too.
int RemoveStaleSegments(const std::string& job_id, uid_t uid = getuid());

// Unlinks every segment of every job of `uid` other than `keep_job_id` in which no process is
// live any more: what killed jobs left behind (SIGTERM/SIGKILL skip the clean-exit removal).
// Judged by name and owner, not by layout: what an older ncclwatch left is collected too.
// A job one of whose processes recorded its exit less than `min_quiet_ns` ago is left alone:
// between two attempts of a restarted job (torchrun's restart, about a second) none of its
// processes lives, and the next attempt needs the last one's segments to tell a unique id it
// used (core/detect/stale_id_rule.h). 0: no such wait (`ncclwatch gc`).
int RemoveDeadJobs(const std::string& keep_job_id, uid_t uid = getuid(), uint64_t min_quiet_ns = 0);

// Unlinks the segments of `job_id` of every run other than `keep_run_key` (run_identity.h)
// in which no process is running: what earlier launches under the same job id left (torchrun's
// "none"). Segments whose run cannot be read (incomplete, other layouts) are `ncclwatch gc`'s.
// `min_quiet_ns` as for RemoveDeadJobs (a SLURM requeue is a new run under the same job id).
int RemoveDeadRuns(const std::string& job_id, uint64_t keep_run_key, uid_t uid = getuid(), uint64_t min_quiet_ns = 0);

// Unlinks every segment of `job_id` when none of its processes is live any more. Called by
// each process at exit after recording its own exit: of processes exiting together, at
// least one sees all the others' marks (each stores its mark seq_cst before scanning), so a
// healthy job leaves nothing behind. Returns 0 while a process lives.
int RemoveJobIfEnded(const std::string& job_id, uid_t uid = getuid());
// The same, over the segments of one run (run_identity.h) only: what each process calls at
// exit, so that a run beside it under the same job id neither keeps its segments alive nor
// loses its own. A segment whose run cannot be read (being created) counts as this run's.
// run_key 0: every run (RemoveJobIfEnded). With `keep_failed` (its launcher may restart it), a
// run one of whose processes failed (a nonzero status, a fatal signal, gone without a word) is
// kept for its next attempt, whose last exit removes both; else the next job's watchdog does.
int RemoveRunIfEnded(const std::string& job_id, uint64_t run_key, uid_t uid = getuid(), bool keep_failed = false);

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_SEGMENT_GC_H_
