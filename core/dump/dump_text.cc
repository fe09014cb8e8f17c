#include "core/dump/dump_text.h"

#include <sstream>

#include "core/dump/records_in_order.h"
#include "core/format/escape.h"
#include "core/format/hex.h"
#include "core/format/rank_list.h"

namespace ncclwatch::dump {
namespace {

using format::FormatHex;
using format::FormatRangeList;

// Every string of a dump came from the job (names, paths, environment) or from a dump file:
// escaped so that reading the .txt with `less -R` or `cat` cannot drive the terminal.
std::string Esc(std::string_view text) { return format::EscapeForTerminal(text); }

std::string ExitText(const detect::ExitFacts& e) {
  if (!e.recorded) return "killed or crashed (no exit recorded)";
  const std::string when = e.exit_ns ? " at mono " + std::to_string(e.exit_ns) + " ns" : "";
  if (e.signal != 0) return "fatal signal " + std::to_string(e.signal) + when;
  return "exited with status " + std::to_string(e.status) + when;
}

void RenderHeader(const RankDump& d, std::ostringstream& out) {
  const auto& p = d.process;
  out << "ncclwatch dump (schema " << kSchemaName << " v" << kSchemaVersion << ")\n"
      << "incident " << Esc(d.incident.id) << " trigger=" << Esc(d.incident.trigger) << " job=" << Esc(d.incident.job_id)
      << " at " << Esc(d.incident.detected_iso) << " (mono " << d.incident.detected_mono_ns << " ns)\n"
      << "rank " << p.global_rank << " local " << p.local_rank << " of " << p.world_size << " on " << Esc(p.host)
      << " pid " << p.pid << " device " << p.device << "\n"
      << "exe " << Esc(p.exe) << "\ncmdline";
  for (const auto& arg : p.cmdline) out << ' ' << Esc(arg);
  out << '\n';
  if (!p.alive) out << "process GONE: " << ExitText(p.exit) << '\n';
  if (d.written_by.pid != 0) {
    out << "written on its behalf by rank " << d.written_by.global_rank << " pid " << d.written_by.pid << " on "
        << Esc(d.written_by.host) << '\n';
  }
  out << '\n';
  const auto& v = d.verdict;
  out << "verdict " << detect::ToString(v.kind) << " comm " << FormatHex(v.comm_hash) << " #" << v.seq << ' ' << Esc(v.op)
      << " culprits " << FormatRangeList(v.culprit_ranks) << " others " << FormatRangeList(v.other_ranks)
      << (v.partial ? " (partial view)" : "") << "\n  " << Esc(v.summary) << "\n\n";
  const auto& e = d.environment;
  out << "versions: nvidia driver " << (e.nvidia_driver.empty() ? "none" : Esc(e.nvidia_driver)) << ", cuda driver "
      << e.cuda_driver_version << ", cuda runtime " << e.cuda_runtime_version << ", nccl " << e.nccl_version
      << ", kernel " << Esc(e.kernel_release) << "\n";
  for (const auto& [key, value] : e.nccl_env) out << "  " << Esc(key) << '=' << Esc(value) << '\n';
  out << '\n';
}

void RenderComms(const RankDump& d, std::ostringstream& out) {
  for (const auto& c : d.comms) {
    out << "comm " << FormatHex(c.comm_hash) << " rank " << c.rank << '/' << c.nranks << " device " << c.device
        << " init " << (c.init_done_ns ? "done" : c.init_started_ns ? "STARTED, NOT DONE" : "not started")
        << " enqueued #" << c.last_enqueued_seq << " completed #" << c.last_completed_seq << " async_error "
        << c.async_error << (c.left ? " LEFT (destroyed/finalized/aborted/revoked by this rank)" : "")
        << (c.untracked_ops ? " untracked ops " + std::to_string(c.untracked_ops) : "") << '\n';
    for (const detect::RecordFacts* record : RecordsInIssueOrder(c)) {
      const detect::RecordFacts& r = *record;
      out << "  #" << r.seq << ' ' << Esc(r.op) << " count=" << r.count << " dtype=" << r.datatype
          << " redop=" << r.redop << " root=" << r.root << " peer=" << r.peer << " stream=" << FormatHex(r.stream)
          << " enqueue=" << r.enqueue_ns << " complete=" << (r.complete_ns ? std::to_string(r.complete_ns) : "-")
          << '\n';
    }
  }
  for (const auto& s : d.host_syncs) {
    out << "thread " << s.tid << " blocked since " << s.blocked_since_ns << " ns on " << detect::ToString(s.target) << ' '
        << FormatHex(s.handle) << '\n';
  }
  out << '\n';
}

void RenderStacks(const RankDump& d, std::ostringstream& out) {
  for (const auto& t : d.threads) {
    out << "thread " << t.tid << " \"" << Esc(t.name) << "\" state " << Esc(t.state)
        << (t.answered ? "" : " (did not answer)") << '\n';
    for (const auto& f : t.frames) {
      out << "  " << (f.internal ? "[internal] " : "") << FormatHex(f.pc) << ' '
          << (f.function.empty() ? "??" : Esc(f.function)) << " (" << Esc(f.module) << '+' << FormatHex(f.offset) << ")\n";
    }
  }
  for (const auto& e : d.stack_errors) out << "stack capture: " << Esc(e) << '\n';
  if (!d.python.available) {
    out << "python stacks unavailable: " << Esc(d.python.reason) << '\n';
    return;
  }
  for (const auto& t : d.python.threads) {
    out << "python thread " << FormatHex(t.thread_id) << (t.current ? " (current)" : "") << '\n';
    for (const auto& f : t.frames) out << "  " << Esc(f.function) << " at " << Esc(f.file) << ':' << f.line << '\n';
  }
}

}  // namespace

std::string RenderDumpText(const RankDump& dump) {
  std::ostringstream out;
  RenderHeader(dump, out);
  RenderComms(dump, out);
  RenderStacks(dump, out);
  return out.str();
}

}  // namespace ncclwatch::dump
