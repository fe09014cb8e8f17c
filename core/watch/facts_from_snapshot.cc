#include "core/watch/facts_from_snapshot.h"

#include <algorithm>
#include <optional>

#include "core/detect/completion.h"
#include "core/detect/p2p_op.h"
#include "core/shm/record_flags.h"

namespace ncclwatch::watch {
namespace {

// Every used slot's state; nullopt for a free slot (or a state this version does not know).
std::optional<detect::CommLifecycle> LifecycleOf(shm::CommState state) {
  switch (state) {
    case shm::CommState::kInitializing: return detect::CommLifecycle::kInitializing;
    case shm::CommState::kReady: return detect::CommLifecycle::kReady;
    case shm::CommState::kSuspended: return detect::CommLifecycle::kSuspended;
    case shm::CommState::kInitFailed: return detect::CommLifecycle::kInitFailed;
    case shm::CommState::kFinalized: return detect::CommLifecycle::kFinalized;
    case shm::CommState::kDestroyed: return detect::CommLifecycle::kDestroyed;
    case shm::CommState::kAborted: return detect::CommLifecycle::kAborted;
    case shm::CommState::kRevoked: return detect::CommLifecycle::kRevoked;
    case shm::CommState::kFree: break;
  }
  return std::nullopt;
}

detect::RecordFacts ToRecordView(const shm::RecordView& r) {
  detect::RecordFacts out;
  out.seq = r.seq;
  out.framework_seq = r.framework_seq;
  out.op = shm::OpName(r.op);
  out.count = r.count;
  out.datatype = r.datatype;
  out.redop = shm::HasRedOp(r.op) ? r.redop : -1;
  out.root = shm::HasRoot(r.op) ? r.root_or_peer : -1;
  out.peer = detect::IsPointToPoint(out.op) ? r.root_or_peer : -1;
  out.stream = r.stream;
  out.group = shm::RecordGroupOf(r.flags);
  out.enqueue_ns = r.enqueue_ns;
  out.complete_ns = r.complete_ns;
  out.never_completes = shm::OwesNoCompletion(r.flags);
  out.captured = (r.flags & shm::kRecordCaptured) != 0;
  out.untracked = shm::CompletionUnknown(r.flags);
  out.aborted = (r.flags & shm::kRecordAborted) != 0;
  return out;
}

detect::ReplayFacts ToReplayFacts(const shm::ReplayView& r) {
  detect::ReplayFacts out;
  out.graph = r.graph;
  out.replay = r.replay;
  out.first_seq = r.first_seq;
  out.framework_seq = r.first_framework_seq;
  out.ops = r.ops;
  for (const shm::Op op : r.op_codes) out.op_names.push_back(shm::OpName(op));
  out.stream = r.stream;
  out.enqueue_ns = r.enqueue_ns;
  out.complete_ns = r.complete_ns;
  out.failed = (r.flags & (shm::kRecordFailed | shm::kRecordNotLaunched)) != 0;
  out.untracked = shm::CompletionUnknown(r.flags);
  return out;
}

// Records arrive oldest first (ring order).
void KeepNewest(std::vector<detect::RecordFacts>& records, size_t max_records) {
  if (records.size() > max_records) {
    records.erase(records.begin(), records.end() - static_cast<std::ptrdiff_t>(max_records));
  }
}

detect::SyncTarget ToSyncTarget(shm::SyncKind kind) {
  switch (kind) {
    case shm::SyncKind::kStream: return detect::SyncTarget::kStream;
    case shm::SyncKind::kEvent: return detect::SyncTarget::kEvent;
    default: return detect::SyncTarget::kDevice;
  }
}

}  // namespace

detect::ExitFacts ExitFactsFromSnapshot(const shm::ProcessView& process) {
  detect::ExitFacts out;
  if (!process.exited || process.exit_how == shm::ExitHow::kNone) return out;  // alive, or gone without a word
  out.recorded = true;
  out.status = process.exit_how == shm::ExitHow::kStatus ? process.exit_status : 0;
  out.signal = process.exit_how == shm::ExitHow::kSignal ? process.exit_signal : 0;
  out.exit_ns = process.exit_ns;
  return out;
}

detect::CommFacts CommFactsFromSnapshot(const shm::CommView& comm, size_t max_records) {
  detect::CommFacts out;
  out.comm_hash = comm.comm_hash;
  out.name = comm.name;
  out.rank = comm.rank;
  out.nranks = comm.nranks;
  out.device = comm.device;
  out.init_started_ns = comm.init_start_ns;
  out.init_done_ns = comm.state == shm::CommState::kInitializing ? 0 : comm.init_done_ns;
  out.last_enqueued_seq = comm.last_enqueued_seq;
  out.async_error = comm.async_error;
  out.lifecycle = LifecycleOf(comm.state).value_or(detect::CommLifecycle::kReady);
  out.untracked_ops = comm.untracked_ops;
  out.derived = (comm.flags & (shm::kCommFromSplit | shm::kCommFromShrink)) != 0;
  for (const shm::RecordView& r : comm.records) {
    detect::RecordFacts record = ToRecordView(r);
    (detect::IsPointToPoint(record.op) ? out.p2p_records : out.records).push_back(std::move(record));
  }
  // Completion over every record, before the view keeps only the newest max_records of each kind.
  out.last_completed_seq = detect::EffectiveLastCompleted(comm.last_completed_seq, out.records);
  KeepNewest(out.records, max_records);
  KeepNewest(out.p2p_records, max_records);
  for (const shm::ReplayView& r : comm.replays) out.replays.push_back(ToReplayFacts(r));
  out.replays_dropped = comm.replays_written - std::min<uint64_t>(comm.replays_written, comm.replays.size());
  return out;
}

detect::ProcessFacts ProcessFactsFromSnapshot(const shm::ProcessView& process, size_t max_records) {
  detect::ProcessFacts out;
  out.pid = process.pid;
  // A process that recorded its exit takes no further part, even while its pid finishes
  // exiting.
  out.alive = process.alive && !process.exited;
  out.exit = ExitFactsFromSnapshot(process);
  out.os.state = process.os.state;
  out.os.wchan = process.os.wchan;
  out.os.kernel_stack = process.os.kernel_stack;
  out.host = process.host;
  out.global_rank = process.global_rank;
  out.local_rank = process.local_rank;
  out.world_size = process.world_size > 0 ? process.world_size : 0;
  out.attempt = detect::Attempt{process.restart_count, process.requeue_count};
  for (const shm::SyncView& s : process.sync_slots) {
    if (s.blocked_since_ns == 0) continue;
    detect::SyncFacts sync;
    sync.tid = s.tid;
    sync.blocked_since_ns = s.blocked_since_ns;
    sync.target = ToSyncTarget(s.kind);
    sync.api = s.api == shm::SyncApi::kDriver ? detect::SyncApi::kDriver : detect::SyncApi::kRuntime;
    // An unknown device (-1) reads as 0 rather than as 2^64-1.
    sync.handle = s.kind == shm::SyncKind::kDevice ? static_cast<uint64_t>(std::max(s.device, 0)) : s.target;
    out.syncs.push_back(sync);
  }
  for (const shm::CommView& c : process.comms) {
    if (!LifecycleOf(c.state) || c.nranks <= 0 || c.rank < 0 || c.rank >= c.nranks) {
      continue;  // a rank outside [0, nranks) is a corrupt slot
    }
    out.comms.push_back(CommFactsFromSnapshot(c, max_records));
  }
  return out;
}

detect::JobFacts FactsFromSnapshot(const shm::JobSnapshot& snapshot, size_t max_records) {
  detect::JobFacts view;
  view.processes.reserve(snapshot.processes.size());
  for (const shm::ProcessView& p : snapshot.processes) {
    if (p.closed) continue;  // a clean exit: nothing of it is awaited
    view.processes.push_back(ProcessFactsFromSnapshot(p, max_records));
  }
  return view;
}

}  // namespace ncclwatch::watch
