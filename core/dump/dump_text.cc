#include "core/dump/dump_text.h"

#include "core/detect/comm_lifecycle.h"
#include "core/detect/replay_state.h"

#include <set>
#include <sstream>
#include <vector>

#include "core/format/comm_label.h"
#include "core/format/duration.h"
#include "core/dump/records_in_order.h"
#include "core/detect/p2p_op.h"
#include "core/format/escape.h"
#include "core/format/framework_seq.h"
#include "core/format/hex.h"
#include "core/format/nccl_names.h"
#include "core/format/rank_list.h"

namespace ncclwatch::dump {
namespace {

using format::FormatHex;
using format::FormatRangeList;

// Every string of a dump came from the job (names, paths, environment) or from a dump file:
// escaped so that reading the .txt with `less -R` or `cat` cannot drive the terminal.
std::string Esc(std::string_view text) { return format::EscapeForTerminal(text); }

// How long before the dump's detection time `then_ns` was (both CLOCK_MONOTONIC of the writing
// host): a dump is a snapshot, so "5.0s ago" means as of detection (the header says so); the
// exact nanoseconds are in the JSON. "" when either time is unknown.
std::string Age(const RankDump& d, uint64_t then_ns) {
  if (then_ns == 0 || d.incident.detected_mono_ns == 0) return "";
  return format::FormatAge(d.incident.detected_mono_ns, then_ns);
}

std::string Ago(const RankDump& d, uint64_t then_ns) {
  const std::string age = Age(d, then_ns);
  return age.empty() ? "at an unknown time" : age + " ago";
}

// The name this rank's facts give communicator `hash` ("" when none or not held).
std::string NameOf(const RankDump& d, uint64_t hash) {
  for (const auto& c : d.comms) {
    if (c.comm_hash == hash) return c.name;
  }
  return "";
}

std::string ExitText(const RankDump& d) {
  const detect::ExitFacts& e = d.process.exit;
  if (!e.recorded) return "killed or crashed (no exit recorded)";
  const std::string when = e.exit_ns ? ", " + Ago(d, e.exit_ns) : "";
  if (e.signal != 0) return "fatal signal " + std::to_string(e.signal) + when;
  return "exited with status " + std::to_string(e.status) + when;
}

// " device 3", or, for a process holding several communicator ranks on several devices (one
// process driving several GPUs), " devices 0-1".
std::string DevicesText(const RankDump& d) {
  std::set<int> devices;
  for (const auto& c : d.comms) {
    if (c.device >= 0) devices.insert(c.device);
  }
  if (devices.size() > 1) return " devices " + FormatRangeList(std::vector<int>(devices.begin(), devices.end()));
  return " device " + std::to_string(d.process.device);
}

// "STOPPED (state T: SIGSTOP or a debugger)", "in the kernel (state D) in nv_wait..., kernel
// stack: ...": why a peer wrote this dump for it.
std::string OsStateText(const detect::OsFacts& os) {
  std::string text = os.state == 'D' ? "in the kernel (state D, uninterruptible)"
                                     : std::string("STOPPED (state ") + os.state + ": SIGSTOP or a debugger)";
  if (!os.wchan.empty()) text += " in " + Esc(os.wchan);
  if (!os.kernel_stack.empty()) {
    text += "; kernel stack:";
    for (const std::string& frame : os.kernel_stack) text += " " + Esc(frame) + " <-";
    text.resize(text.size() - 3);
  }
  return text;
}

void RenderHeader(const RankDump& d, std::ostringstream& out) {
  const auto& p = d.process;
  out << "ncclwatch dump (schema " << kSchemaName << " v" << kSchemaVersion << ")\n"
      << "incident " << Esc(d.incident.id) << " trigger=" << Esc(d.incident.trigger) << " job=" << Esc(d.incident.job_id)
      << " at " << Esc(d.incident.detected_iso) << " (times below are ages at this moment)\n"
      << "rank " << p.global_rank
      << (p.local_rank >= 0 && p.world_size > 0
              ? " (local rank " + std::to_string(p.local_rank) + ", world size " + std::to_string(p.world_size) + ")"
              : "")
      << " on " << Esc(p.host) << " pid " << p.pid << DevicesText(d) << "\n"
      << "exe " << Esc(p.exe) << "\ncmdline";
  for (const auto& arg : p.cmdline) out << ' ' << Esc(arg);
  out << '\n';
  if (!p.alive) out << "process GONE: " << ExitText(d) << '\n';
  if (p.alive && p.os.cannot_answer()) out << "process " << OsStateText(p.os) << '\n';
  if (d.written_by.pid != 0) {
    out << "written on its behalf by rank " << d.written_by.global_rank << " pid " << d.written_by.pid << " on "
        << Esc(d.written_by.host) << '\n';
  }
  out << '\n';
  const auto& v = d.verdict;
  out << "verdict " << detect::ToString(v.kind) << " comm " << format::CommLabel(v.comm_hash, NameOf(d, v.comm_hash)) << ' '
      << Esc(detect::WaitSubject(v))
      << " culprits " << FormatRangeList(v.culprit_ranks) << " others " << FormatRangeList(v.other_ranks)
      << (v.partial ? " (partial view)" : "") << "\n  " << Esc(v.summary) << "\n\n";
  const auto& e = d.environment;
  out << "versions: nvidia driver " << (e.nvidia_driver.empty() ? "none" : Esc(e.nvidia_driver)) << ", cuda driver "
      << format::CudaVersionText(e.cuda_driver_version) << ", cuda runtime "
      << format::CudaVersionText(e.cuda_runtime_version) << ", nccl " << format::NcclVersionText(e.nccl_version)
      << ", kernel " << Esc(e.kernel_release) << "\n";
  for (const auto& [key, value] : e.nccl_env) out << "  " << Esc(key) << '=' << Esc(value) << '\n';
  out << '\n';
}

// "#43 AllReduce (framework seq 42) count=1024 datatype=float32 redop=sum root=- peer=- on default
// stream, enqueued 5.0s ago, not complete[, issued at train.py:88 in step]"
void RenderRecord(const RankDump& d, const detect::RecordFacts& r, std::ostringstream& out) {
  out << "  #" << r.seq << ' ' << Esc(r.op) << format::FrameworkSeqNote(r.framework_seq, detect::IsPointToPoint(r.op))
      << " count=" << r.count << " datatype=" << format::DataTypeName(r.datatype)
      << " redop=" << format::RedOpName(r.redop) << " root=" << format::RankOrNone(r.root)
      << " peer=" << format::RankOrNone(r.peer) << " on " << format::StreamText(r.stream) << ", enqueued "
      << Ago(d, r.enqueue_ns) << ", "
      << (r.captured          ? "captured into a CUDA graph (it runs at each replay)"
          : r.complete_ns == 0 ? "not complete"
                               : "completed " + Ago(d, r.complete_ns));
  if (!r.call_site.empty()) out << ", issued at " << Esc(r.call_site);
  out << '\n';
}

// "replay 5 of graph [AllReduce from #2 on comm 0x...] (key 0x..., framework seq 2) on stream
// 0x..., launched 5.0s ago, not complete"
void RenderReplay(const RankDump& d, const detect::CommFacts& c, const detect::ReplayFacts& r,
                  std::ostringstream& out) {
  out << "  replay " << r.replay << " of " << Esc(detect::GraphLabel(r, c.comm_hash)) << " (key "
      << FormatHex(r.graph) << (r.framework_seq != 0 ? ", framework seq " + std::to_string(r.framework_seq) : "")
      << ") on " << format::StreamText(r.stream) << ", launched " << Ago(d, r.enqueue_ns) << ", "
      << (r.failed        ? "launch failed"
          : r.untracked   ? "completion unknown"
          : r.complete_ns ? "completed " + Ago(d, r.complete_ns)
                          : "not complete")
      << '\n';
}

// ", LEFT (aborted by this rank)", ", SUSPENDED (idle by request)", ", INIT FAILED"; "" for a
// communicator that initialises or is ready.
std::string LifecycleText(const detect::CommFacts& c) {
  if (c.left()) return ", LEFT (" + std::string(detect::ToString(c.lifecycle)) + " by this rank)";
  if (c.lifecycle == detect::CommLifecycle::kSuspended) return ", SUSPENDED (idle by request)";
  if (c.lifecycle == detect::CommLifecycle::kInitFailed) return ", INIT FAILED";
  return "";
}

void RenderComms(const RankDump& d, std::ostringstream& out) {
  for (const auto& c : d.comms) {
    out << "comm " << format::CommLabel(c.comm_hash, c.name) << " rank " << c.rank << '/' << c.nranks << " device " << c.device
        << ": init " << (c.init_done_ns ? "done" : c.init_started_ns ? "STARTED, NOT DONE" : "not started")
        << ", enqueued #" << c.last_enqueued_seq << ", completed #" << c.last_completed_seq << ", async error "
        << format::NcclResultName(c.async_error)
        << LifecycleText(c)
        << (c.untracked_ops ? ", untracked ops " + std::to_string(c.untracked_ops) : "") << '\n';
    for (const detect::RecordFacts* r : RecordsInIssueOrder(c)) RenderRecord(d, *r, out);
    for (const detect::ReplayFacts& r : c.replays) RenderReplay(d, c, r, out);
  }
  for (const auto& s : d.host_syncs) {
    const std::string blocked = Age(d, s.blocked_since_ns);
    out << "thread " << s.tid << " blocked in " << Esc(detect::SyncCallName(s)) << " ("
        << format::SyncObjectText(detect::ToString(s.target), s.handle) << ")"
        << (blocked.empty() ? "" : " for " + blocked) << '\n';
  }
  out << '\n';
}

// Where the job's Python code stands comes first: a reader of a Python rank's dump looks for
// their own line of code, then for the native frames under it.
void RenderPythonStacks(const RankDump& d, std::ostringstream& out) {
  if (!d.python.available) {
    out << "python stacks unavailable: " << Esc(d.python.reason) << "\n\n";
    return;
  }
  for (const auto& t : d.python.threads) {
    out << "python thread " << FormatHex(t.thread_id) << (t.current ? " (current)" : "") << '\n';
    for (const auto& f : t.frames) out << "  " << Esc(f.function) << " at " << Esc(f.file) << ':' << f.line << '\n';
  }
  out << '\n';
}

// The job's native threads; ncclwatch's own (IsOwnThread) are counted, not shown: the JSON
// keeps every thread.
void RenderNativeStacks(const RankDump& d, std::ostringstream& out) {
  size_t own = 0;
  for (const auto& t : d.threads) {
    if (IsOwnThread(t)) {
      ++own;
      continue;
    }
    out << "thread " << t.tid << " \"" << Esc(t.name) << "\" state " << Esc(t.state)
        << (t.answered ? "" : " (did not answer)") << '\n';
    for (const auto& f : t.frames) {
      out << "  " << (f.internal ? "[internal] " : "") << FormatHex(f.pc) << ' '
          << (f.function.empty() ? "??" : Esc(f.function)) << " (" << Esc(f.module) << '+' << FormatHex(f.offset) << ")\n";
    }
  }
  if (own != 0) out << "(" << own << " thread" << (own == 1 ? "" : "s") << " of ncclwatch not shown; the .json has every thread)\n";
  for (const auto& e : d.stack_errors) out << "stack capture: " << Esc(e) << '\n';
}

}  // namespace

std::string RenderDumpText(const RankDump& dump) {
  std::ostringstream out;
  RenderHeader(dump, out);
  RenderComms(dump, out);
  RenderPythonStacks(dump, out);
  RenderNativeStacks(dump, out);
  return out.str();
}

}  // namespace ncclwatch::dump
