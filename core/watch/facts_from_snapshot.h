// Turns what the processes of one job published on this host (shm::JobSnapshot) into the
// detector's input (detect::JobFacts), following the adapter contract of
// core/detect/README.md:
//   * dead processes stay, with alive == false, their last state and how they left (exit):
//     killed or crashed (pid gone, nothing recorded), or exited by status or fatal signal
//     (SegmentState::kExited; such a process is not alive even while its pid finishes);
//   * ops get their canonical names ("Broadcast" for ncclBcast); redop/root are -1 for ops
//     that have none; P2P records go to p2p_records (detect/p2p_op.h decides which ops are P2P);
//   * a collective that can never be seen complete (captured, untracked, failed) does not
//     hold last_completed_seq back once a later one completes;
//   * every used communicator slot is kept with its lifecycle: those this rank left
//     (destroyed, finalized, aborted, revoked) so that a peer still waiting on them can blame
//     this rank; suspended ones (idle by request) and failed inits as evidence the rules do
//     not judge (CommFacts::judged); slots whose rank is outside [0, nranks) are left out;
//     untracked_ops is copied;
//   * a host sync keeps its thread; a device sync's handle is the device ordinal, 0 unknown.
// The hang dump keeps exactly these facts (core/watch/dump_builder.h).
#ifndef NCCLWATCH_CORE_WATCH_FACTS_FROM_SNAPSHOT_H_
#define NCCLWATCH_CORE_WATCH_FACTS_FROM_SNAPSHOT_H_

#include <cstddef>
#include <cstdint>

#include "core/detect/facts.h"
#include "core/shm/snapshot.h"

namespace ncclwatch::watch {

// The newest `max_records` collective records, and as many P2P records, of each communicator are kept;
// completion is judged over every record first.
inline constexpr size_t kRecordsPerCommInView = 64;
// For a snapshot whose read already bounded its records (status, the exporter's --max-records):
// keep them all, so that an old pending op is judged by its own record.
inline constexpr size_t kEveryRecordRead = SIZE_MAX;

detect::ExitFacts ExitFactsFromSnapshot(const shm::ProcessView& process);
detect::CommFacts CommFactsFromSnapshot(const shm::CommView& comm, size_t max_records = kRecordsPerCommInView);
detect::ProcessFacts ProcessFactsFromSnapshot(const shm::ProcessView& process, size_t max_records = kRecordsPerCommInView);
detect::JobFacts FactsFromSnapshot(const shm::JobSnapshot& snapshot, size_t max_records = kRecordsPerCommInView);

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_FACTS_FROM_SNAPSHOT_H_
