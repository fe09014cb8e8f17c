// Per-thread state of the hooks once active: the ops and communicator inits buffered
// inside a group, and the thread's sync slot (the nesting counters are in HookDepths).
//
// Reached through an initial-exec TLS pointer (one load); allocated on the thread's first
// observed call and freed at thread exit. A state created before a fork belongs to the
// parent's runtime: `generation` tells the child to start afresh.
#ifndef NCCLWATCH_PRELOAD_THREAD_STATE_H_
#define NCCLWATCH_PRELOAD_THREAD_STATE_H_

#include <cstdint>
#include <vector>

#include "core/shm/comm_slot.h"
#include "core/shm/layout.h"
#include "preload/record_range.h"

namespace ncclwatch::preload {

struct CommEntry;

// A successful NCCL call inside ncclGroupStart/End, published at the outermost GroupEnd.
struct GroupedOp {
  CommEntry* comm;
  shm::OpFingerprint op;
  uint64_t enqueue_ns;
};

struct ThreadState {
  uint64_t generation = 0;
  int pid = 0;  // the process that created this state (a forked child inherits it)
  int tid = 0;
  std::vector<GroupedOp> grouped_ops;
  std::vector<StreamRange> group_ranges;  // between the outermost GroupEnd and its return
  // Communicators created inside a group: NCCL initialises them at the outermost GroupEnd.
  std::vector<CommEntry*> grouped_inits;
  shm::SyncSlot* sync_slot = nullptr;
  bool sync_slot_claimed = false;  // claim attempted (the pool may have been full)
  // ncclCommInitAll creates its unique id through the PLT; the hook copies it here.
  bool capture_unique_id = false;
  bool unique_id_captured = false;
  unsigned char unique_id[128] = {};
};

// The calling thread's state for the current runtime generation.
ThreadState* ThisThread(uint64_t generation);

// Nesting counters kept for every thread, even while ncclwatch is inert (plain TLS: no
// allocation), so that a group opened before the first communicator is known.
//   reentry: > 0 while inside a hooked call, so NCCL's own nested calls
//            (ncclBcast -> ncclBroadcast) count once.
//   group:   the application's ncclGroupStart nesting.
struct HookDepths {
  int reentry = 0;
  int group = 0;
};
HookDepths& ThisThreadDepths();

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_THREAD_STATE_H_
