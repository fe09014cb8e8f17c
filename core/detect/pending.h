// What a rank has pending: the one judgement of "pending" that every reader of progress uses
// (the rules through CommMember::waits, the watchdog's last gasp, `status`, the exporter).
// Completion is EffectiveLastCompleted's (completion.h), already folded into
// CommFacts::last_completed_seq by whoever built the facts; P2P ops are judged op by op
// (P2PStateOf). A communicator the rules do not judge (suspended, failed init) or that this
// rank left has nothing pending.
#ifndef NCCLWATCH_CORE_DETECT_PENDING_H_
#define NCCLWATCH_CORE_DETECT_PENDING_H_

#include <cstdint>
#include <optional>

#include "core/detect/facts.h"

namespace ncclwatch::detect {

// The collective this rank waits in, #last_completed_seq + 1, when it issued more than it
// completed; 0 when it issued nothing more. Counted even when untracked: see WaitsOnCollective.
uint64_t InFlightSeq(const CommFacts& comm);

// Its record; nullptr when there is none or it is no longer kept (aged out of the ring).
const RecordFacts* InFlightCollective(const CommFacts& comm);

// Known to wait on a collective: some pending collective is tracked, or has no record left to
// say otherwise. Pending ops that are all untracked (completion unknown) are no evidence of a
// wait; a tracked op pending behind them is.
bool WaitsOnCollective(const CommFacts& comm);

// The oldest point-to-point op posted and pending (P2PState::kPending); nullptr when none.
const RecordFacts* OldestPendingP2P(const CommFacts& comm);

// One thing a rank waits on, and since when (0: pending, but when it was issued is no longer
// known: its record aged out).
struct Wait {
  enum class On { kInit, kCollective, kP2P, kReplay, kHostSync };
  On on = On::kCollective;
  uint64_t since_ns = 0;
  const CommFacts* comm = nullptr;  // kInit, kCollective, kP2P
  const RecordFacts* op = nullptr;  // kCollective (nullptr when aged out), kP2P
  uint64_t seq = 0;                 // kCollective: the in-flight #N
  const SyncFacts* sync = nullptr;  // kHostSync
  const ReplayFacts* replay = nullptr;  // kReplay: the launch of a CUDA graph (replay_state.h)
};

// The oldest op pending on `comm` (the in-flight collective when WaitsOnCollective, the
// oldest pending P2P op, the oldest pending replay of a CUDA graph), nullopt when none. An unknown issue time counts as oldest.
std::optional<Wait> OldestPendingOp(const CommFacts& comm);

// What `process` has waited on longest: an init in progress, a pending op, a blocked host
// sync; nullopt when nothing. Pointers into `process`.
std::optional<Wait> OldestWait(const ProcessFacts& process);

// `process` as it stood when its communicators were aborted or revoked: each such communicator
// initialising or ready again, and the ops the abort ended pending again. torch's own timeout
// aborts the communicators a rank is stuck in before it dies; a last gasp taken after that
// judges what they were stuck in, not the emptiness the abort left.
ProcessFacts AsAtAbort(ProcessFacts process);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_PENDING_H_
