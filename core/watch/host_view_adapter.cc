#include "core/watch/host_view_adapter.h"

#include <algorithm>

#include "core/detect/completion.h"

namespace ncclwatch::watch {
namespace {

bool IsWatched(shm::CommState state) {
  return state == shm::CommState::kInitializing || state == shm::CommState::kReady;
}

// A record whose completion will never be published.
bool NeverCompletes(const shm::RecordView& r) {
  return (r.flags & (shm::kRecordCaptured | shm::kRecordUntracked | shm::kRecordFailed)) != 0;
}

detect::CollectiveRecordView ToRecordView(const shm::RecordView& r) {
  detect::CollectiveRecordView out;
  out.seq = r.seq;
  out.op = shm::OpName(r.op);
  out.count = r.count;
  out.datatype = r.datatype;
  out.redop = shm::HasRedOp(r.op) ? r.redop : -1;
  out.root = shm::HasRoot(r.op) ? r.root_or_peer : -1;
  out.enqueue_ns = r.enqueue_ns;
  out.complete_ns = r.complete_ns;
  out.never_completes = NeverCompletes(r);
  return out;
}

detect::SyncTarget ToSyncTarget(shm::SyncKind kind) {
  switch (kind) {
    case shm::SyncKind::kStream: return detect::SyncTarget::kStream;
    case shm::SyncKind::kEvent: return detect::SyncTarget::kEvent;
    default: return detect::SyncTarget::kDevice;
  }
}

}  // namespace

detect::CommView ToCommView(const shm::CommView& comm, size_t max_records) {
  detect::CommView out;
  out.comm_hash = comm.comm_hash;
  out.rank = comm.rank;
  out.nranks = comm.nranks;
  out.device = comm.device;
  out.init_started_ns = comm.init_start_ns;
  out.init_done_ns = comm.state == shm::CommState::kInitializing ? 0 : comm.init_done_ns;
  out.last_enqueued_seq = comm.last_enqueued_seq;
  out.async_error = comm.async_error;
  for (const shm::RecordView& r : comm.records) {
    if (!shm::IsPointToPoint(r.op)) out.records.push_back(ToRecordView(r));
  }
  // Completion over every record, before the view keeps only the newest max_records.
  out.last_completed_seq = detect::EffectiveLastCompleted(comm.last_completed_seq, out.records);
  if (out.records.size() > max_records) {
    out.records.erase(out.records.begin(), out.records.end() - static_cast<std::ptrdiff_t>(max_records));
  }
  return out;
}

detect::ProcessView ToProcessView(const shm::ProcessView& process, size_t max_records) {
  detect::ProcessView out;
  out.pid = process.pid;
  out.alive = process.alive;
  out.host = process.host;
  out.global_rank = process.global_rank;
  for (const shm::SyncView& s : process.sync_slots) {
    if (s.blocked_since_ns == 0) continue;
    detect::SyncSlotView sync;
    sync.blocked_since_ns = s.blocked_since_ns;
    sync.target = ToSyncTarget(s.kind);
    sync.handle = s.kind == shm::SyncKind::kDevice ? static_cast<uint64_t>(s.device) : s.target;
    out.syncs.push_back(sync);
  }
  for (const shm::CommView& c : process.comms) {
    if (!IsWatched(c.state) || c.nranks <= 0 || c.rank < 0) continue;
    out.comms.push_back(ToCommView(c, max_records));
  }
  return out;
}

detect::HostView ToHostView(const shm::JobSnapshot& snapshot, size_t max_records) {
  detect::HostView view;
  view.processes.reserve(snapshot.processes.size());
  for (const shm::ProcessView& p : snapshot.processes) {
    if (p.closed) continue;  // a clean exit: nothing of it is awaited
    view.processes.push_back(ToProcessView(p, max_records));
  }
  return view;
}

}  // namespace ncclwatch::watch
