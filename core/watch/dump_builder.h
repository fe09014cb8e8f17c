// Fills a rank's hang dump (dump::RankDump) from what the watchdog has at hand: the verdict
// (its own detector's, or one learnt from a trigger file), this process's entry of the shm
// snapshot (its ranks, communicators, host syncs) and its captured stacks.
// Process facts (host, exe, NCCL_* env, kernel) and detection times are added by
// dump::FillProcessFacts / StampDetectionTime; CUDA/NCCL versions by the caller.
#ifndef NCCLWATCH_CORE_WATCH_DUMP_BUILDER_H_
#define NCCLWATCH_CORE_WATCH_DUMP_BUILDER_H_

#include <cstddef>
#include <vector>

#include "core/detect/verdict.h"
#include "core/dump/dump.h"
#include "core/shm/snapshot.h"
#include "core/stacks/process_stacks.h"
#include "core/watch/trigger_file.h"

namespace ncclwatch::watch {

// Collective records, and as many P2P records, kept per communicator in a dump.
inline constexpr size_t kRecordsPerCommInDump = 64;

// The verdict of a dump requested by another rank's trigger file: the trigger's, its summary
// naming who requested it, kind kNone when this version does not know the trigger's kind;
// `since` is unknown there (0).
detect::Verdict VerdictOfTrigger(const Trigger& trigger);

// process.global/local rank, world size and device; comms and host_syncs: the process's facts
// (ProcessFactsFromSnapshot, facts_from_snapshot.h), the very model the live detector judged:
// watched communicators and those this rank left (`left`), with completion as judged and
// their last `max_records` collective and as many P2P records. A process holding several
// ranks (ncclCommInitAll, a group init over several devices) lists one comms[] entry per
// (communicator, rank).
void AddPublishedState(const shm::ProcessView& self, size_t max_records, dump::RankDump* out);

// threads, stack_errors, python.
void AddStacks(const ProcessStacks& stacks, dump::RankDump* out);

// The dumps a live rank writes, next to its own dump `own`, for every process of `snapshot`
// that is gone (killed, crashed or exited: ProcessFacts::alive false) and held a rank of one of
// `own`'s communicators (not, e.g., a worker of an earlier elastic attempt), so that `analyze`
// sees the exited ranks from the dumps alone: each has `own`'s incident and verdict, the gone
// process's identity, `process.alive = false` and `process.exit`, its communicators
// (including those it left) with their last `max_records` records, no stacks, and
// `written_by` naming `own`'s process. Every live rank of the host writes the same file
// names (DumpFileStem uses the gone process's rank and pid), so they replace each other.
std::vector<dump::RankDump> DumpsOfGoneProcesses(const shm::JobSnapshot& snapshot, const dump::RankDump& own,
                                                 size_t max_records);

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_DUMP_BUILDER_H_
