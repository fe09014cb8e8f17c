// Per-thread state of the hooks once active: the open group's record ranges and the
// communicator inits buffered inside it, and the thread's sync slot (the nesting counters are
// in HookDepths).
//
// Reached through an initial-exec TLS pointer (one load); allocated on the thread's first
// observed call and freed at thread exit. A state created before a fork belongs to the
// parent's runtime: `generation` tells the child to start afresh.
#ifndef NCCLWATCH_PRELOAD_OBSERVE_THREAD_STATE_H_
#define NCCLWATCH_PRELOAD_OBSERVE_THREAD_STATE_H_

#include <cstdint>
#include <vector>

#include "core/shm/comm_slot.h"
#include "core/shm/layout.h"
#include "preload/observe/record_range.h"

namespace ncclwatch::preload {

struct CommEntry;

struct ThreadState {
  uint64_t generation = 0;
  int pid = 0;  // the process that created this state (a forked child inherits it)
  int tid = 0;
  // The open group's records, per (communicator, stream), settled at its outermost end: the
  // first range here (comm null when none), the others in group_ranges (nccl_observer_groups.cc).
  // A group on one communicator and stream, the common case, never touches the vector.
  StreamRange group_range;
  std::vector<StreamRange> group_ranges;
  // Communicators created inside a group: NCCL initialises them at the outermost GroupEnd.
  std::vector<CommEntry*> grouped_inits;
  shm::SyncSlot* sync_slot = nullptr;
  bool sync_slot_claimed = false;  // claim attempted (the pool may have been full)
  // ncclCommInitAll creates its unique id through the PLT; the hook copies it here.
  bool capture_unique_id = false;
  bool unique_id_captured = false;
  unsigned char unique_id[128] = {};
};

// Nesting counters kept for every thread, even while ncclwatch is inert (plain TLS: no
// allocation), so that a group opened before the first communicator is known.
//   reentry: > 0 while inside a hooked call, so NCCL's own nested calls
//            (ncclBcast -> ncclBroadcast) count once.
//   group:   the application's ncclGroupStart nesting.
//   group_key: the open group's key (nccl_observer_groups.cc NextGroupKey; its serial goes
//            in the records' flags), taken by its first observed op (BeginOp, before the real call); 0 until then and
//            after the outermost end.
//   group_work: what the open group's outermost end settles (GroupWork); an end without
//            work touches nothing else.
enum class GroupWork : uint8_t {
  kNone,
  kOneRange,  // records on one (communicator, stream): ThreadState::group_range only
  kMore,      // more ranges (group_ranges) or buffered inits (grouped_inits)
};
struct HookDepths {
  int reentry = 0;
  int group = 0;
  uint64_t group_key = 0;
  GroupWork group_work = GroupWork::kNone;
};

// Inline, with the variables visible here, so that a hook reads them with one %fs-relative
// load each instead of a call into thread_state.cc (four such calls per op otherwise).
// __thread rather than thread_local: an extern thread_local is reached through a TLS wrapper
// function, __thread (constant-initialised, trivially destroyed) never is. Initial-exec: the
// library's whole static TLS is 112 bytes (readelf -l: PT_TLS), well inside the surplus glibc
// keeps for libraries dlopen'ed after start-up (rtld.optional_static_tls, 512 bytes by
// default), so a dlopen'ed libncclwatch.so loads too.
namespace thread_detail {
extern __thread ThreadState* state __attribute__((tls_model("initial-exec")));
extern __thread HookDepths depths __attribute__((tls_model("initial-exec")));
// The first observed call of a thread, or the first after a fork: allocates the state.
ThreadState* NewThreadState(uint64_t generation);
}  // namespace thread_detail

// The calling thread's state for the current runtime generation.
inline ThreadState* ThisThread(uint64_t generation) {
  ThreadState* ts = thread_detail::state;
  if (ts != nullptr && ts->generation == generation) [[likely]] return ts;
  return thread_detail::NewThreadState(generation);
}

inline HookDepths& ThisThreadDepths() { return thread_detail::depths; }

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_THREAD_STATE_H_
