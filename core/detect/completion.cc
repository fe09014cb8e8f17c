#include "core/detect/completion.h"

#include <algorithm>
#include <unordered_set>

namespace ncclwatch::detect {

uint64_t EffectiveLastCompleted(uint64_t published_last_completed,
                                const std::vector<RecordFacts>& records) {
  uint64_t completed = published_last_completed;
  std::unordered_set<uint64_t> untrackable;
  for (const RecordFacts& r : records) {
    if (r.complete_ns != 0) completed = std::max(completed, r.seq);
    if (r.never_completes) untrackable.insert(r.seq);
  }
  while (untrackable.count(completed + 1)) ++completed;
  return completed;
}

namespace {

// Whether some op of `records` issued after `op` on its stream was seen complete.
bool LaterOnStreamComplete(const RecordFacts& op, const std::vector<RecordFacts>& records) {
  for (const RecordFacts& r : records) {
    if (r.stream == op.stream && r.enqueue_ns > op.enqueue_ns && r.complete_ns != 0 && !r.untracked) return true;
  }
  return false;
}

}  // namespace

P2PState P2PStateOf(const RecordFacts& op, const CommFacts& comm) {
  if (op.never_completes) return P2PState::kComplete;
  // An untracked or aborted op's own complete_ns proves nothing (an abort fires the event).
  if (op.complete_ns != 0 && !op.untracked) return P2PState::kComplete;
  if (op.enqueue_ns != 0 &&
      (LaterOnStreamComplete(op, comm.p2p_records) || LaterOnStreamComplete(op, comm.records))) {
    return P2PState::kComplete;
  }
  return op.untracked ? P2PState::kUnknown : P2PState::kPending;
}

bool QueuedBehindPending(const RecordFacts& op, const CommFacts& comm) {
  if (op.enqueue_ns == 0) return false;
  for (const RecordFacts& earlier : comm.p2p_records) {
    if (earlier.stream != op.stream || earlier.enqueue_ns == 0 || earlier.enqueue_ns >= op.enqueue_ns) continue;
    if (earlier.group != 0 && earlier.group == op.group) continue;
    if (P2PStateOf(earlier, comm) != P2PState::kComplete) return true;
  }
  return false;
}

}  // namespace ncclwatch::detect
