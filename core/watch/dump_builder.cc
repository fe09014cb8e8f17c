#include "core/watch/dump_builder.h"

#include <algorithm>
#include <set>

#include "core/watch/facts_from_snapshot.h"

namespace ncclwatch::watch {
namespace {

dump::CollectiveRecord ToDumpRecord(const shm::RecordView& r) {
  dump::CollectiveRecord out;
  out.seq = r.seq;
  out.op = shm::OpName(r.op);
  out.count = r.count;
  out.datatype = r.datatype;
  out.redop = shm::HasRedOp(r.op) ? r.redop : -1;
  out.root = shm::HasRoot(r.op) ? r.root_or_peer : -1;
  out.peer = shm::IsPointToPoint(r.op) ? r.root_or_peer : -1;
  out.stream = r.stream;
  out.group = shm::RecordGroupOf(r.flags);
  out.enqueue_ns = r.enqueue_ns;
  out.complete_ns = r.complete_ns;
  out.never_completes = shm::OwesNoCompletion(r.flags);
  out.untracked = shm::CompletionUnknown(r.flags);
  return out;
}

std::string SyncTargetName(shm::SyncKind kind) {
  switch (kind) {
    case shm::SyncKind::kStream: return "stream";
    case shm::SyncKind::kEvent: return "event";
    default: return "device";
  }
}

std::string StateLetter(char state) { return std::string(1, state == 0 ? '?' : state); }

}  // namespace

dump::LocalVerdict ToLocalVerdict(const detect::Verdict& v) {
  dump::LocalVerdict out;
  out.kind = detect::ToString(v.kind);
  out.comm_hash = v.comm_hash;
  out.seq = v.seq;
  out.op = v.op;
  out.culprit_ranks = v.culprit_ranks;
  out.other_ranks = v.other_ranks;
  out.since_mono_ns = v.since_ns;
  out.summary = v.summary;
  out.partial = v.partial;
  return out;
}

dump::LocalVerdict ToLocalVerdict(const Trigger& t) {
  dump::LocalVerdict out = t.verdict;
  if (!detect::ParseVerdictKind(out.kind)) out.kind = "none";
  out.summary = "requested by " + t.host + ":" + std::to_string(t.pid) + " (trigger file): " + t.verdict.summary;
  return out;
}

void AddPublishedState(const shm::ProcessView& self, size_t max_records, dump::RankDump* out) {
  out->process.global_rank = self.global_rank;
  out->process.local_rank = self.local_rank;
  out->process.world_size = self.world_size > 0 ? self.world_size : 0;
  for (const shm::CommView& c : self.comms) {
    if (c.nranks <= 0 || c.rank < 0 || c.rank >= c.nranks) continue;  // schema requires a valid rank
    if (out->process.device < 0) out->process.device = c.device;
    dump::CommDump state;
    state.comm_hash = c.comm_hash;
    state.rank = c.rank;
    state.nranks = c.nranks;
    state.device = c.device;
    state.init_started_ns = c.init_start_ns;
    state.init_done_ns = c.state == shm::CommState::kInitializing ? 0 : c.init_done_ns;
    state.last_enqueued_seq = c.last_enqueued_seq;
    state.last_completed_seq = c.last_completed_seq;
    state.async_error = c.async_error;
    state.left = shm::RankLeftComm(c.state);
    state.untracked_ops = c.untracked_ops;
    const size_t first = c.records.size() > max_records ? c.records.size() - max_records : 0;
    for (size_t i = first; i < c.records.size(); ++i) state.records.push_back(ToDumpRecord(c.records[i]));
    out->comms.push_back(std::move(state));
  }
  for (const shm::SyncView& s : self.sync_slots) {
    if (s.blocked_since_ns == 0) continue;
    dump::HostSync sync;
    sync.tid = s.tid;
    sync.since_ns = s.blocked_since_ns;
    sync.target = SyncTargetName(s.kind);
    sync.handle = s.kind == shm::SyncKind::kDevice ? static_cast<uint64_t>(std::max(s.device, 0)) : s.target;
    out->host_syncs.push_back(sync);
  }
}

void AddStacks(const ProcessStacks& stacks, dump::RankDump* out) {
  for (const ThreadStack& t : stacks.threads) {
    dump::NativeThread thread;
    thread.tid = t.tid;
    thread.name = t.name;
    thread.state = StateLetter(t.state);
    thread.answered = t.answered;
    for (const Frame& f : t.frames) {
      thread.frames.push_back(dump::NativeFrame{f.pc, f.function, f.module, f.offset, f.internal});
    }
    out->threads.push_back(std::move(thread));
  }
  out->stack_errors = stacks.errors;
  out->python.available = stacks.is_python && stacks.python_error.empty() && !stacks.python.empty();
  if (!stacks.is_python) {
    out->python.reason = "not a Python process";
  } else if (!out->python.available) {
    out->python.reason = stacks.python_error.empty() ? "no Python thread state found" : stacks.python_error;
  }
  out->python.threads = stacks.python;  // one type from capture to dump
}

std::vector<dump::RankDump> DumpsOfGoneProcesses(const shm::JobSnapshot& snapshot, const dump::RankDump& own,
                                                 size_t max_records) {
  std::set<uint64_t> shared;  // the writer's communicators: a gone process of an earlier
  for (const dump::CommDump& c : own.comms) shared.insert(c.comm_hash);  // attempt shares none
  const auto shares_a_comm = [&shared](const shm::ProcessView& p) {
    return std::any_of(p.comms.begin(), p.comms.end(), [&shared](const shm::CommView& c) {
      return shared.count(c.comm_hash) != 0;
    });
  };
  std::vector<dump::RankDump> out;
  for (const shm::ProcessView& p : snapshot.processes) {
    if (p.pid == own.process.pid || (p.alive && !p.exited) || !shares_a_comm(p)) continue;
    dump::RankDump d;
    d.incident = own.incident;
    d.verdict = own.verdict;
    d.process.host = p.host;
    d.process.pid = p.pid;
    d.process.alive = false;
    const detect::ExitFacts exit = ExitFactsFromSnapshot(p);
    d.process.exit = dump::ProcessExit{exit.recorded, exit.status, exit.signal, exit.exit_ns};
    AddPublishedState(p, max_records, &d);
    d.written_by = dump::DumpWriter{own.process.pid, own.process.host, own.process.global_rank};
    d.python.reason = "process gone; dump written on its behalf by pid " + std::to_string(own.process.pid);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace ncclwatch::watch
