#include "core/dump/dump_text.h"

#include <sstream>

#include "core/dump/dump_json.h"

namespace ncclwatch::dump {
namespace {

std::string JoinInts(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out.empty() ? "-" : out;
}

void RenderHeader(const RankDump& d, std::ostringstream& out) {
  const auto& p = d.process;
  out << "ncclwatch dump (schema " << kSchemaName << " v" << kSchemaVersion << ")\n"
      << "incident " << d.incident.id << " trigger=" << d.incident.trigger << " job=" << d.incident.job_id
      << " at " << d.incident.detected_iso << " (mono " << d.incident.detected_mono_ns << " ns)\n"
      << "rank " << p.global_rank << " local " << p.local_rank << " of " << p.world_size << " on " << p.host
      << " pid " << p.pid << " device " << p.device << "\n"
      << "exe " << p.exe << "\ncmdline";
  for (const auto& arg : p.cmdline) out << ' ' << arg;
  out << "\n\n";
  const auto& v = d.verdict;
  out << "verdict " << v.kind << " comm " << FormatHex(v.comm_hash) << " #" << v.seq << ' ' << v.op
      << " culprits " << JoinInts(v.culprit_ranks) << " others " << JoinInts(v.other_ranks)
      << (v.partial ? " (partial view)" : "") << "\n  " << v.summary << "\n\n";
  const auto& e = d.environment;
  out << "versions: nvidia driver " << (e.nvidia_driver.empty() ? "none" : e.nvidia_driver) << ", cuda driver "
      << e.cuda_driver_version << ", cuda runtime " << e.cuda_runtime_version << ", nccl " << e.nccl_version
      << ", kernel " << e.kernel_release << "\n";
  for (const auto& [key, value] : e.nccl_env) out << "  " << key << '=' << value << '\n';
  out << '\n';
}

void RenderComms(const RankDump& d, std::ostringstream& out) {
  for (const auto& c : d.comms) {
    out << "comm " << FormatHex(c.comm_hash) << " rank " << c.rank << '/' << c.nranks << " device " << c.device
        << " init " << (c.init_done_ns ? "done" : c.init_started_ns ? "STARTED, NOT DONE" : "not started")
        << " enqueued #" << c.last_enqueued_seq << " completed #" << c.last_completed_seq << " async_error "
        << c.async_error << '\n';
    for (const auto& r : c.records) {
      out << "  #" << r.seq << ' ' << r.op << " count=" << r.count << " dtype=" << r.datatype
          << " redop=" << r.redop << " root=" << r.root << " peer=" << r.peer << " stream=" << FormatHex(r.stream)
          << " enqueue=" << r.enqueue_ns << " complete=" << (r.complete_ns ? std::to_string(r.complete_ns) : "-")
          << '\n';
    }
  }
  for (const auto& s : d.host_syncs) {
    out << "thread " << s.tid << " blocked since " << s.since_ns << " ns on " << s.target << ' '
        << FormatHex(s.handle) << '\n';
  }
  out << '\n';
}

void RenderStacks(const RankDump& d, std::ostringstream& out) {
  for (const auto& t : d.threads) {
    out << "thread " << t.tid << " \"" << t.name << "\" state " << t.state
        << (t.answered ? "" : " (did not answer)") << '\n';
    for (const auto& f : t.frames) {
      out << "  " << (f.internal ? "[internal] " : "") << FormatHex(f.pc) << ' '
          << (f.function.empty() ? "??" : f.function) << " (" << f.module << '+' << FormatHex(f.offset) << ")\n";
    }
  }
  for (const auto& e : d.stack_errors) out << "stack capture: " << e << '\n';
  if (!d.python.available) {
    out << "python stacks unavailable: " << d.python.reason << '\n';
    return;
  }
  for (const auto& t : d.python.threads) {
    out << "python thread " << FormatHex(t.thread_id) << (t.current ? " (current)" : "") << '\n';
    for (const auto& f : t.frames) out << "  " << f.function << " at " << f.file << ':' << f.line << '\n';
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
