// Fills a rank's hang dump (dump::RankDump) from what the watchdog has at hand: the verdict
// (its own detector's, or one learnt from a trigger file), this process's facts (its ranks,
// communicators, host syncs: the facts its poll built, facts_from_snapshot.h) and its
// captured stacks.
// Process facts (host, exe, NCCL_* env, kernel) and detection times are added by
// dump::FillProcessFacts / StampDetectionTime; CUDA/NCCL versions by the caller.
#ifndef NCCLWATCH_CORE_WATCH_DUMP_BUILDER_H_
#define NCCLWATCH_CORE_WATCH_DUMP_BUILDER_H_

#include <cstddef>
#include <vector>

#include "core/detect/verdict.h"
#include "core/dump/dump.h"
#include "core/stacks/process_stacks.h"
#include "core/watch/trigger_file.h"

namespace ncclwatch::watch {

// The verdict of a dump requested by another rank's trigger file: the trigger's, its summary
// naming who requested it, kind kNone when this version does not know the trigger's kind;
// `since` is unknown there (0).
detect::Verdict VerdictOfTrigger(const Trigger& trigger);

// process.global/local rank, world size and device; comms and host_syncs: the process's facts,
// the very model the live detector judged (facts_from_snapshot.h): every communicator with its
// lifecycle, completion as judged, and the records the facts kept. A process holding several
// ranks (ncclCommInitAll, a group init over several devices) lists one comms[] entry per
// (communicator, rank).
void AddPublishedState(const detect::ProcessFacts& self, dump::RankDump* out);

// threads, stack_errors, python.
void AddStacks(const ProcessStacks& stacks, dump::RankDump* out);

// The dumps a live rank writes, next to its own dump `own`, for every process of `facts` that
// cannot write its own and held a rank of one of `own`'s communicators (not, e.g., a worker
// of an earlier elastic attempt): one that is gone (killed, crashed or exited: alive false,
// with `process.exit`) or one that runs but cannot answer (stopped by SIGSTOP or a debugger,
// or in uninterruptible sleep in a driver: OsFacts::cannot_answer, with `process.os`). So
// `analyze` sees them from the dumps alone: each has `own`'s incident and verdict, the
// process's identity, its communicators (including those it left) as the facts keep them, no
// stacks, and `written_by` naming `own`'s process. Every live rank of the host writes the same
// file names (DumpFileStem uses the process's rank and pid), so they replace each other; a
// stopped process that resumes and dumps replaces them too.
std::vector<dump::RankDump> DumpsOnBehalf(const detect::JobFacts& facts, const dump::RankDump& own);

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_DUMP_BUILDER_H_
