// Turns what the processes of one job published on this host (shm::JobSnapshot) into the
// detector's input (detect::HostView), following the adapter contract of
// core/detect/README.md:
//   * dead processes stay, with alive == false and their last state;
//   * ops get their canonical names ("Broadcast" for ncclBcast); redop/root are -1 for ops
//     that have none; P2P records are left out (they are not collectives);
//   * a collective that can never be seen complete (captured, untracked, failed) does not
//     hold last_completed_seq back once a later one completes;
//   * communicators that are gone (destroyed, aborted, finalized, revoked, failed init) are
//     left out: nothing waits on them.
#ifndef NCCLWATCH_CORE_WATCH_HOST_VIEW_ADAPTER_H_
#define NCCLWATCH_CORE_WATCH_HOST_VIEW_ADAPTER_H_

#include <cstddef>

#include "core/detect/host_view.h"
#include "core/shm/snapshot.h"

namespace ncclwatch::watch {

// The newest `max_records` collective records of each communicator are kept.
inline constexpr size_t kRecordsPerCommInView = 64;

detect::CommView ToCommView(const shm::CommView& comm, size_t max_records = kRecordsPerCommInView);
detect::ProcessView ToProcessView(const shm::ProcessView& process, size_t max_records = kRecordsPerCommInView);
detect::HostView ToHostView(const shm::JobSnapshot& snapshot, size_t max_records = kRecordsPerCommInView);

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_HOST_VIEW_ADAPTER_H_
