// Fills a rank's hang dump (dump::RankDump) from what the watchdog has at hand: the verdict
// (its own detector's, or one learnt from a trigger file), this process's entry of the shm
// snapshot (its ranks, communicators, host syncs) and its captured stacks.
// Process facts (host, exe, NCCL_* env, kernel) and detection times are added by
// dump::FillProcessFacts / StampDetectionTime; CUDA/NCCL versions by the caller.
#ifndef NCCLWATCH_CORE_WATCH_DUMP_BUILDER_H_
#define NCCLWATCH_CORE_WATCH_DUMP_BUILDER_H_

#include <cstddef>

#include "core/detect/verdict.h"
#include "core/dump/dump.h"
#include "core/shm/snapshot.h"
#include "core/stacks/process_stacks.h"
#include "core/watch/trigger_file.h"

namespace ncclwatch::watch {

// Records kept per communicator in a dump.
inline constexpr size_t kRecordsPerCommInDump = 64;

dump::LocalVerdict ToLocalVerdict(const detect::Verdict& verdict);
// A verdict learnt from another rank's trigger file; `since` is unknown there (0).
dump::LocalVerdict ToLocalVerdict(const Trigger& trigger);

// process.global/local rank, world size and device; comms (live or not, with their last
// `max_records` collective and P2P records); host_syncs.
void AddPublishedState(const shm::ProcessView& self, size_t max_records, dump::RankDump* out);

// threads, stack_errors, python.
void AddStacks(const ProcessStacks& stacks, dump::RankDump* out);

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_DUMP_BUILDER_H_
