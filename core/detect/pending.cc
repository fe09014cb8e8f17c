#include "core/detect/pending.h"

#include "core/detect/comm_group.h"
#include "core/detect/completion.h"
#include "core/detect/evidence.h"
#include "core/detect/replay_state.h"

namespace ncclwatch::detect {
namespace {

bool MayWait(const CommFacts& comm) { return comm.judged() && !comm.left(); }

// Whether `candidate` was issued before `current` (an unknown time, 0, counts as earliest).
bool Older(const Wait& candidate, const std::optional<Wait>& current) {
  if (!current) return true;
  if (current->since_ns == 0) return false;
  return candidate.since_ns < current->since_ns;
}

}  // namespace

uint64_t InFlightSeq(const CommFacts& comm) {
  if (!MayWait(comm) || comm.last_enqueued_seq <= comm.last_completed_seq) return 0;
  return comm.last_completed_seq + 1;
}

const RecordFacts* InFlightCollective(const CommFacts& comm) {
  const uint64_t seq = InFlightSeq(comm);
  return seq == 0 ? nullptr : FindRecord(comm, seq);
}

bool WaitsOnCollective(const CommFacts& comm) {
  if (InFlightSeq(comm) == 0) return false;
  // Pending ops without a record (aged out of the ring) count as tracked: only a record can
  // say an op is untracked.
  uint64_t pending_records = 0;
  for (const RecordFacts& r : comm.records) {
    if (r.seq <= comm.last_completed_seq || r.seq > comm.last_enqueued_seq) continue;
    if (!r.untracked) return true;
    ++pending_records;
  }
  return pending_records < comm.last_enqueued_seq - comm.last_completed_seq;
}

const RecordFacts* OldestPendingP2P(const CommFacts& comm) {
  if (!MayWait(comm)) return nullptr;
  const RecordFacts* oldest = nullptr;
  for (const RecordFacts& op : comm.p2p_records) {
    if (P2PStateOf(op, comm) != P2PState::kPending) continue;
    if (oldest == nullptr || op.enqueue_ns < oldest->enqueue_ns) oldest = &op;
  }
  return oldest;
}

std::optional<Wait> OldestPendingOp(const CommFacts& comm) {
  std::optional<Wait> oldest;
  if (WaitsOnCollective(comm)) {
    Wait w;
    w.on = Wait::On::kCollective;
    w.comm = &comm;
    w.seq = InFlightSeq(comm);
    w.op = FindRecord(comm, w.seq);
    w.since_ns = EnqueueTimeAtOrAfter(comm, w.seq).value_or(0);
    oldest = w;
  }
  if (const RecordFacts* p2p = OldestPendingP2P(comm)) {
    Wait w{Wait::On::kP2P, p2p->enqueue_ns, &comm};
    w.op = p2p;
    if (Older(w, oldest)) oldest = w;
  }
  if (const ReplayFacts* replay = MayWait(comm) ? OldestPendingReplay(comm) : nullptr) {
    Wait w{Wait::On::kReplay, replay->enqueue_ns, &comm};
    w.replay = replay;
    if (Older(w, oldest)) oldest = w;
  }
  return oldest;
}

std::optional<Wait> OldestWait(const ProcessFacts& process) {
  std::optional<Wait> oldest;
  for (const CommFacts& comm : process.comms) {
    if (comm.lifecycle == CommLifecycle::kInitializing && comm.init_started_ns != 0) {
      Wait w;
      w.on = Wait::On::kInit;
      w.comm = &comm;
      w.since_ns = comm.init_started_ns;
      if (Older(w, oldest)) oldest = w;
    }
    if (std::optional<Wait> op = OldestPendingOp(comm); op && Older(*op, oldest)) oldest = op;
  }
  for (const SyncFacts& sync : process.syncs) {
    if (sync.blocked_since_ns == 0) continue;
    Wait w;
    w.on = Wait::On::kHostSync;
    w.sync = &sync;
    w.since_ns = sync.blocked_since_ns;
    if (Older(w, oldest)) oldest = w;
  }
  return oldest;
}

ProcessFacts AsAtAbort(ProcessFacts process) {
  for (CommFacts& comm : process.comms) {
    if (!comm.aborted()) continue;
    comm.lifecycle = comm.init_done_ns == 0 ? CommLifecycle::kInitializing : CommLifecycle::kReady;
    for (auto* records : {&comm.records, &comm.p2p_records}) {
      for (RecordFacts& r : *records) {
        if (!r.aborted) continue;
        r.aborted = false;
        r.untracked = false;
        r.complete_ns = 0;
      }
    }
  }
  return process;
}

}  // namespace ncclwatch::detect
