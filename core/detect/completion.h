// How far one rank's collectives are complete: the one computation shared by the live
// watchdog (shm snapshot -> JobFacts) and `ncclwatch analyze` (dumps), so both judge the
// same rank as waiting or done.
#ifndef NCCLWATCH_CORE_DETECT_COMPLETION_H_
#define NCCLWATCH_CORE_DETECT_COMPLETION_H_

#include <cstdint>
#include <vector>

#include "core/detect/facts.h"

namespace ncclwatch::detect {

// The highest #N to count as complete on one rank, given the counter the rank published and
// its recent records (collectives only, any order). Completion events fire in stream order,
// so any record seen complete raises the answer to its #N; a record that owes no completion
// (never_completes: captured or failed) right after the answer counts as complete too, or it
// would look pending forever. An untracked record never does: its completion is unknown.
uint64_t EffectiveLastCompleted(uint64_t published_last_completed,
                                const std::vector<RecordFacts>& records);

// Where one point-to-point op stands. P2P ops are outside the collective sequence, so each is
// judged by itself.
enum class P2PState {
  kComplete,  // seen complete, or owes no completion (captured into a graph, or failed)
  kPending,   // issued, tracked, not seen complete: a wait
  kUnknown,   // its completion cannot be known (untracked, or aborted): never complete, no wait
};

// The state of `op`, one of `comm.p2p_records`. Completion events fire in stream order, so an
// op later on the same stream (P2P or collective) seen complete completes it too, even when
// its own completion is unknown; an aborted op's later ops are aborted as well.
P2PState P2PStateOf(const RecordFacts& op, const CommFacts& comm);

// Whether `op` (one of `comm.p2p_records`) cannot start yet: an earlier P2P op on its stream
// has not completed, and the two are not of one group (a group's ops progress together). A Send
// posted after a pending Recv on one stream waits for that Recv: torch's dist.recv then
// dist.send on both stages deadlocks in stream order, with every op posted.
bool QueuedBehindPending(const RecordFacts& op, const CommFacts& comm);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_COMPLETION_H_
