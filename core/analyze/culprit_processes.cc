#include "core/analyze/culprit_processes.h"

#include <string.h>  // sigabbrev_np

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "core/analyze/thread_views.h"
#include "core/format/rank_list.h"

namespace ncclwatch::analyze {
namespace {

using format::FormatRangeList;
using format::FormatRanks;

// At most this many kernel frames in the one-line description; the JSON keeps them all.
constexpr size_t kKernelFramesShown = 4;

bool LooksLikePython(const dump::RankDump& d) {
  if (d.python.available) return true;
  const std::string base = d.process.exe.substr(d.process.exe.rfind('/') + 1);
  return base.rfind("python", 0) == 0;
}

ProcessState StateOf(const dump::RankDump& d) {
  if (!d.process.alive) return ProcessState::kGone;
  const char s = d.process.os.state;
  if (s == 'Z') return ProcessState::kZombie;
  if (s == 'D') return ProcessState::kInKernel;
  if (s == 'T' || s == 't') return ProcessState::kStopped;
  return ProcessState::kDumped;
}

// The innermost frame worth reading of the first thread a person reads (a thread blocked in a
// host sync, else the main thread): a Python frame where the interpreter runs one.
std::string WhereOf(const dump::RankDump& d) {
  const ThreadViews views = BuildThreadViews(d);
  if (views.views.empty()) return "";
  const ThreadStackView& v = views.views.front();
  if (v.in_host_sync) return "blocked in " + v.blocked_in;
  for (const FrameView& f : v.frames) {
    if (f.python) return "in " + FrameText(f);
  }
  return v.frames.empty() ? "" : "in " + FrameText(v.frames.front());
}

// What to run to see where it is now: py-spy for a Python process, gdb otherwise; both when
// the dump cannot tell (a peer's dump has no stacks and no executable).
std::string InspectCommand(const CulpritProcess& p, bool known) {
  const std::string pid = std::to_string(p.pid);
  const std::string py_spy = "py-spy dump --native --pid " + pid;
  const std::string gdb = "gdb -p " + pid + " -batch -ex 'thread apply all bt'";
  if (!known) return py_spy + " (Python) or " + gdb;
  return p.python ? py_spy : gdb;
}

bool GoneSince(const CulpritProcess& p, const std::vector<AfterEvent>& then) {
  return std::any_of(then.begin(), then.end(), [&p](const AfterEvent& e) {
    return e.host == p.host && e.pid == p.pid && e.kind != AfterEvent::Kind::kIncident;
  });
}

std::string NextFor(const CulpritProcess& p, bool python_known, bool gone_since) {
  const std::string on = " on host " + p.host;
  const std::string pid = std::to_string(p.pid);
  switch (p.state) {
    case ProcessState::kStopped:
      return "kill -CONT " + pid + on + " (stopped, it cannot answer), then " + InspectCommand(p, python_known);
    case ProcessState::kInKernel:
      return "cat /proc/" + pid + "/stack" + on + " (as root): it waits in the kernel, in a driver; then dmesg and "
             "nvidia-smi there";
    case ProcessState::kZombie:
      return "ps -o ppid= -p " + pid + on + ": it exited and its parent has not reaped it; the parent's log says why";
    case ProcessState::kGone:
      if (!p.exit.recorded) return "dmesg" + on + " (the OOM killer?) and the launcher's log: it was killed without a word";
      return "its log" + on + ": it " + ExitText(p.exit);
    case ProcessState::kNoDump:
      return "the host of " + FormatRanks(p.ranks) + ": is it up, did its launcher start them (its log, dmesg)?";
    case ProcessState::kDumped:
      break;
  }
  if (gone_since) return "";  // its stacks below are all there is; the hints say what to try
  return InspectCommand(p, python_known) + on + ", while it runs (the stacks below are from its dump)";
}

}  // namespace

std::string ExitText(const detect::ExitFacts& exit) {
  if (!exit.recorded) return "vanished without recording an exit (SIGKILL, the OOM killer)";
  if (exit.signal != 0) {
    const char* name = sigabbrev_np(exit.signal);
    return "died of signal " + std::to_string(exit.signal) + (name ? std::string(" (SIG") + name + ")" : std::string());
  }
  return "exited with status " + std::to_string(exit.status);
}

const char* ProcessStateName(ProcessState state) {
  switch (state) {
    case ProcessState::kDumped: return "dumped";
    case ProcessState::kStopped: return "stopped";
    case ProcessState::kInKernel: return "in_kernel";
    case ProcessState::kZombie: return "zombie";
    case ProcessState::kGone: return "gone";
    case ProcessState::kNoDump: return "no_dump";
  }
  return "dumped";
}

std::string ProcessLabel(const CulpritProcess& p) {
  if (p.state == ProcessState::kNoDump) return FormatRanks(p.ranks);
  const std::string where = p.host + ":" + std::to_string(p.pid);
  if (p.comm_ranks.size() > 1) {
    std::string label = "process " + where + (p.global_rank >= 0 ? " (rank " + std::to_string(p.global_rank) + ")" : "") +
                        " drives comm ranks " + FormatRangeList(p.comm_ranks);
    if (!p.devices.empty()) label += ", " + std::string(p.devices.size() > 1 ? "devices " : "device ") + FormatRangeList(p.devices);
    if (p.ranks != p.comm_ranks) label += "; culprit " + FormatRanks(p.ranks);
    return label;
  }
  const int rank = p.ranks.empty() ? p.global_rank : p.ranks.front();
  return "rank " + std::to_string(rank) + " (" + where + ")";
}

std::string ProcessStateText(const CulpritProcess& p) {
  const std::string by = p.described_by.empty() ? "" : ", as " + p.described_by + " saw it";
  const std::string wchan = p.os.wchan.empty() ? "" : ", in " + p.os.wchan;
  switch (p.state) {
    case ProcessState::kDumped:
      return p.where.empty() ? "dumped, no stack of its own" : p.where;
    case ProcessState::kStopped:
      return std::string("stopped (state ") + p.os.state + wchan + ")" + by;
    case ProcessState::kInKernel: {
      std::string text = "in the kernel (state D" + wchan + ")";
      if (!p.os.kernel_stack.empty()) {
        text += ", kernel stack:";
        for (size_t i = 0; i < p.os.kernel_stack.size() && i < kKernelFramesShown; ++i) text += " " + p.os.kernel_stack[i];
        if (p.os.kernel_stack.size() > kKernelFramesShown) text += " ...";
      }
      return text + by;
    }
    case ProcessState::kZombie:
      return "a zombie (exited, not reaped by its parent)" + by;
    case ProcessState::kGone:
      return "gone: " + ExitText(p.exit) + by;
    case ProcessState::kNoDump:
      return std::string("no dump, and no process on the hosts that dumped held ") + (p.ranks.size() == 1 ? "it" : "them") +
             ": not known to have started" + (p.described_by.empty() ? "" : "; " + p.described_by + " waited on " +
                                                                                  (p.ranks.size() == 1 ? "it" : "them"));
  }
  return "";
}

std::vector<CulpritProcess> DescribeCulprits(const std::vector<std::pair<int, const dump::RankDump*>>& culprits,
                                             const std::vector<int>& without, const CommTable* table,
                                             const std::vector<AfterEvent>& then) {
  std::vector<CulpritProcess> out;
  std::map<const dump::RankDump*, size_t> index;
  for (const auto& [rank, d] : culprits) {
    auto [it, inserted] = index.emplace(d, out.size());
    if (!inserted) {
      out[it->second].ranks.push_back(rank);
      continue;
    }
    if (out.size() == kMaxCulpritProcesses) {
      index.erase(it);
      continue;
    }
    CulpritProcess p;
    p.ranks.push_back(rank);
    p.global_rank = d->process.global_rank;
    p.host = d->process.host;
    p.pid = d->process.pid;
    p.state = StateOf(*d);
    p.os = d->process.os;
    p.exit = d->process.exit;
    p.python = LooksLikePython(*d);
    if (d->written_by.pid != 0) {
      p.described_by = d->written_by.host + ":" + std::to_string(d->written_by.pid) +
                       (d->written_by.global_rank >= 0 ? " (rank " + std::to_string(d->written_by.global_rank) + ")" : "");
    }
    if (table) {
      std::set<int> devices;
      for (const detect::CommFacts& c : d->comms) {
        if (c.comm_hash != table->comm_hash) continue;
        p.comm_ranks.push_back(c.rank);
        if (c.device >= 0) devices.insert(c.device);
      }
      std::sort(p.comm_ranks.begin(), p.comm_ranks.end());
      p.devices.assign(devices.begin(), devices.end());
    }
    if (p.state == ProcessState::kDumped) p.where = WhereOf(*d);
    // A peer's dump has no stacks and no executable: whether it runs Python is not known.
    const bool python_known = d->written_by.pid == 0;
    p.next = NextFor(p, python_known, GoneSince(p, then));
    out.push_back(std::move(p));
  }
  if (!without.empty()) {
    CulpritProcess p;
    p.ranks = without;
    p.state = ProcessState::kNoDump;
    // What is known of ranks on another host comes from the ranks that waited on them.
    if (table) {
      std::map<std::string, std::vector<int>> by_host;
      for (const auto& [rank, entry] : table->ranks) by_host[entry.dump->process.host].push_back(rank);
      for (const auto& [host, ranks] : by_host) {
        p.described_by += (p.described_by.empty() ? "" : ", ") + host + " (" + FormatRanks(ranks) + ")";
      }
    }
    p.next = NextFor(p, false, false);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace ncclwatch::analyze
