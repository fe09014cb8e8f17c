// The detector's input: what one host's ncclwatch instances have published, frozen at
// one instant. The detector never reads shared memory itself; an adapter fills this view
// from the shm snapshot, which keeps the classification rules testable with crafted views.
//
// Conventions:
//   * Times are CLOCK_MONOTONIC nanoseconds, comparable across processes of one host.
//     0 means "never happened / not set".
//   * Collective sequence numbers are 1-based, per communicator, and count identically on
//     every rank (the N-th collective call on a communicator is #N everywhere).
//   * A process that has exited must stay in the view with alive == false (with its last
//     published state) so that its peers' waits can be blamed on it.
#ifndef NCCLWATCH_CORE_DETECT_HOST_VIEW_H_
#define NCCLWATCH_CORE_DETECT_HOST_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ncclwatch::detect {

// What a host-side CUDA synchronisation call is waiting on.
enum class SyncTarget { kStream, kEvent, kDevice };

// One thread's host-sync slot. A slot with blocked_since_ns == 0 is idle.
struct SyncSlotView {
  uint64_t blocked_since_ns = 0;
  SyncTarget target = SyncTarget::kDevice;
  uint64_t handle = 0;  // cudaStream_t / cudaEvent_t value; device ordinal for kDevice.
};

// One collective as issued by one rank. Two ranks agree on collective #N when every
// field from op to root is equal.
struct CollectiveRecordView {
  uint64_t seq = 0;
  std::string op;         // NCCL API name without the prefix: "AllReduce", "Broadcast", ...
  uint64_t count = 0;
  int datatype = -1;      // ncclDataType_t value
  int redop = -1;         // ncclRedOp_t value; -1 for ops without a reduction
  int root = -1;          // -1 for ops without a root
  uint64_t enqueue_ns = 0;
  uint64_t complete_ns = 0;  // 0 while not known complete
  // Its own completion is never published (issued while capturing, untracked, or the call
  // failed); see EffectiveLastCompleted in completion.h.
  bool never_completes = false;
};

// One communicator as seen from one rank (one process may hold several ranks of one
// communicator, e.g. after ncclCommInitAll).
struct CommView {
  uint64_t comm_hash = 0;
  int rank = -1;
  int nranks = 0;
  int device = -1;
  uint64_t init_started_ns = 0;
  uint64_t init_done_ns = 0;        // 0 while init has not finished
  uint64_t last_enqueued_seq = 0;   // highest #N this rank has issued
  uint64_t last_completed_seq = 0;  // highest #N known complete on this rank
  int async_error = 0;              // ncclResult_t from ncclCommGetAsyncError
  std::vector<CollectiveRecordView> records;  // recent collectives, any order
};

struct ProcessView {
  int32_t pid = 0;
  bool alive = true;
  std::string host;
  int global_rank = -1;  // e.g. from RANK; -1 when unknown
  std::vector<SyncSlotView> syncs;
  std::vector<CommView> comms;
};

struct HostView {
  std::vector<ProcessView> processes;
};

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_HOST_VIEW_H_
