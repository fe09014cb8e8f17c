#include "core/watch/dump_builder.h"

#include <algorithm>
#include <set>


namespace ncclwatch::watch {
namespace {

std::string StateLetter(char state) { return std::string(1, state == 0 ? '?' : state); }

// The process's ranks and device; its communicators and host syncs are its facts.
void AddFacts(detect::ProcessFacts facts, dump::RankDump* out) {
  out->process.global_rank = facts.global_rank;
  out->process.local_rank = facts.local_rank;
  out->process.world_size = facts.world_size;
  out->process.os = facts.os;
  out->process.attempt = facts.attempt;
  for (const detect::CommFacts& c : facts.comms) {
    if (out->process.device < 0) out->process.device = c.device;
  }
  out->comms = std::move(facts.comms);
  out->host_syncs = std::move(facts.syncs);
}

}  // namespace

detect::Verdict VerdictOfTrigger(const Trigger& t) {
  detect::Verdict out = t.verdict;
  if (out.kind == detect::VerdictKind::kUnknown) out.kind = detect::VerdictKind::kNone;
  out.summary = "requested by " + t.host + ":" + std::to_string(t.pid) + " (trigger file): " + t.verdict.summary;
  return out;
}

void AddPublishedState(const detect::ProcessFacts& self, dump::RankDump* out) { AddFacts(self, out); }

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

std::vector<dump::RankDump> DumpsOnBehalf(const detect::JobFacts& facts, const dump::RankDump& own) {
  std::set<uint64_t> shared;  // the writer's communicators: a gone process of an earlier
  for (const detect::CommFacts& c : own.comms) shared.insert(c.comm_hash);  // attempt shares none
  const auto shares_a_comm = [&shared](const detect::ProcessFacts& p) {
    return std::any_of(p.comms.begin(), p.comms.end(),
                       [&shared](const detect::CommFacts& c) { return shared.count(c.comm_hash) != 0; });
  };
  std::vector<dump::RankDump> out;
  for (const detect::ProcessFacts& p : facts.processes) {
    if (p.pid == own.process.pid || (p.alive && !p.os.cannot_answer()) || !shares_a_comm(p)) continue;
    dump::RankDump d;
    d.incident = own.incident;
    d.verdict = own.verdict;
    d.process.host = p.host;
    d.process.pid = p.pid;
    d.process.alive = p.alive;
    if (!p.alive) d.process.exit = p.exit;
    AddFacts(p, &d);
    d.written_by = dump::DumpWriter{own.process.pid, own.process.host, own.process.global_rank};
    const std::string why = p.alive ? std::string("process ") + (p.os.state == 'D' ? "in the kernel (state D)" : "stopped (state T)")
                                    : std::string("process gone");
    d.python.reason = why + "; dump written on its behalf by pid " + std::to_string(own.process.pid);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace ncclwatch::watch
