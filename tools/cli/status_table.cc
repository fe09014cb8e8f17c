#include "tools/cli/status_table.h"

#include <algorithm>
#include <map>
#include <set>
#include <cstdio>
#include <optional>
#include <string>

#include "core/detect/comm_lifecycle.h"
#include "core/detect/detector.h"
#include "core/detect/evidence.h"
#include "core/detect/p2p_op.h"
#include "core/detect/pending.h"
#include "core/detect/replay_state.h"
#include "core/format/comm_label.h"
#include "core/format/duration.h"
#include "core/format/escape.h"
#include "core/format/hex.h"
#include "core/format/rank_list.h"
#include "core/watch/facts_from_snapshot.h"

namespace ncclwatch::tools {
namespace {

std::string Age(uint64_t now_ns, uint64_t since_ns) {
  if (since_ns == 0 || now_ns < since_ns) return "-";
  return format::FormatDuration(now_ns - since_ns);
}

// When the rank last saw an op of `c` complete; 0 when none is known.
uint64_t LastCompletionNs(const detect::CommFacts& c) {
  uint64_t last = 0;
  for (const auto* records : {&c.records, &c.p2p_records}) {
    for (const detect::RecordFacts& r : *records) last = std::max(last, r.complete_ns);
  }
  return last;
}

// "Recv from 1 (#3)": the k-th op of that direction towards that peer.
std::string P2PLabel(const detect::RecordFacts& r) {
  const bool receives = detect::P2PDirectionOf(r.op) == detect::P2PDirection::kRecv;
  return r.op + (receives ? " from " : " to ") + std::to_string(r.peer) + " (#" + std::to_string(r.seq) + ")";
}

bool BlockedInSync(const detect::ProcessFacts& p) {
  for (const auto& s : p.syncs) {
    if (s.blocked_since_ns != 0) return true;
  }
  return false;
}

// ",EXITED(status 0)", ",EXITED(signal 6)" for a process that recorded how it left; ",DEAD" for
// one gone without a word (killed, crashed).
std::string GoneState(const detect::ProcessFacts& p) {
  if (p.alive) return "";
  if (p.exit.recorded && p.exit.signal != 0) return ",EXITED(signal " + std::to_string(p.exit.signal) + ")";
  if (p.exit.recorded) return ",EXITED(status " + std::to_string(p.exit.status) + ")";
  return ",DEAD";
}

bool AllGone(const detect::JobFacts& facts) {
  for (const auto& p : facts.processes) {
    if (p.alive) return false;
  }
  return !facts.processes.empty();
}

// What the incidents say of one row: the rank a verdict blames (for sync_stuck, every row of
// the blocked process) is its culprit; a rank that waits on one, a waiter. nullopt when no
// verdict is about it.
struct RowIncident {
  const char* role;  // "culprit" or "waits"
  std::string kind;
  std::string Text() const { return std::string(role) + ":" + kind; }
};

std::optional<RowIncident> IncidentOfRow(const std::vector<detect::Verdict>& verdicts, const detect::ProcessFacts& p,
                                         const detect::CommFacts& c) {
  auto has = [](const std::vector<int>& ranks, int rank) {
    return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
  };
  for (const detect::Verdict& v : verdicts) {
    if (v.kind == detect::VerdictKind::kSyncStuck) {
      if (v.subject_pid == p.pid) return RowIncident{"culprit", detect::ToString(v.kind)};
      continue;
    }
    if (v.comm_hash != c.comm_hash) continue;
    if (has(v.culprit_ranks, c.rank)) return RowIncident{"culprit", detect::ToString(v.kind)};
    if (has(v.other_ranks, c.rank)) return RowIncident{"waits", detect::ToString(v.kind)};
  }
  return std::nullopt;
}

// The COMM column: hash and name (format/comm_label.h), as wide as the widest of the job.
int CommColumnWidth(const detect::JobFacts& facts) {
  size_t width = 18;  // "0x" and 16 digits
  for (const auto& p : facts.processes) {
    for (const auto& c : p.comms) width = std::max(width, format::CommLabel(c.comm_hash, c.name).size());
  }
  return static_cast<int>(width);
}

// One communicator row's progress: what it waits on (pending.h), and since when.
struct RowProgress {
  uint64_t in_flight_seq = 0;                         // the collective it waits in, 0: none
  const detect::RecordFacts* in_flight = nullptr;     // its record, when kept
  const detect::RecordFacts* p2p = nullptr;           // else the oldest pending P2P op
  const detect::ReplayFacts* replay = nullptr;        // else the oldest pending replay of a CUDA graph
  uint64_t since_ns = 0;
};

RowProgress ProgressOf(const detect::CommFacts& c) {
  RowProgress out;
  out.in_flight_seq = detect::InFlightSeq(c);
  out.in_flight = detect::InFlightCollective(c);
  if (out.in_flight_seq == 0) out.p2p = detect::OldestPendingP2P(c);
  if (out.in_flight_seq == 0 && out.p2p == nullptr) out.replay = detect::OldestPendingReplay(c);
  if (out.in_flight_seq != 0) {
    out.since_ns = detect::EnqueueTimeAtOrAfter(c, out.in_flight_seq).value_or(0);
  } else if (out.p2p != nullptr) {
    out.since_ns = out.p2p->enqueue_ns;
  } else if (out.replay != nullptr) {
    out.since_ns = out.replay->enqueue_ns;
  } else {
    const uint64_t last = LastCompletionNs(c);
    out.since_ns = last != 0 ? last : c.init_done_ns != 0 ? c.init_done_ns : c.init_started_ns;
  }
  return out;
}

// A process the kernel has stopped (SIGSTOP, a debugger) or holds in uninterruptible sleep (a
// driver call) is neither idle nor in flight: nothing it shows moves until that ends.
std::string OsStateText(const detect::OsFacts& os) {
  if (os.state == 'T' || os.state == 't') return "STOPPED";
  if (os.state == 'D') return os.wchan.empty() ? "D" : "D(" + format::EscapeForTerminal(os.wchan) + ")";
  return "";
}

std::string StateOf(const detect::ProcessFacts& p, const detect::CommFacts& c, const RowProgress& progress) {
  if (std::string os = OsStateText(p.os); p.alive && !os.empty()) return os;
  std::string state(detect::ToString(c.lifecycle));
  if (c.lifecycle == detect::CommLifecycle::kReady) {
    state = progress.in_flight_seq != 0 || progress.p2p != nullptr || progress.replay != nullptr ? "in-flight"
                                                                                                   : "idle";
  }
  return state;
}

// The newest launch of a CUDA graph that replayed ops of `c` (replay_state.h); nullptr when none.
const detect::ReplayFacts* NewestReplay(const detect::CommFacts& c) {
  const detect::ReplayFacts* newest = nullptr;
  for (const detect::ReplayFacts& r : c.replays) {
    if (!r.failed && (newest == nullptr || r.enqueue_ns > newest->enqueue_ns)) newest = &r;
  }
  return newest;
}

// The REPLAY column: "30 [AllReduce from #2]", the newest replay's number and its graph; "-".
std::string ReplayColumn(const detect::CommFacts& c) {
  const detect::ReplayFacts* newest = NewestReplay(c);
  if (newest == nullptr) return "-";
  return std::to_string(newest->replay) + " [" + detect::GraphOpsText(*newest) + "]";
}

std::string Row(const detect::ProcessFacts& p, const detect::CommFacts& c, uint64_t now_ns, bool job_gone,
                const std::vector<detect::Verdict>& verdicts, int comm_width) {
  const RowProgress progress = ProgressOf(c);
  std::string op = progress.in_flight != nullptr ? "#" + std::to_string(progress.in_flight_seq) + " " +
                                                       progress.in_flight->op
                   : progress.in_flight_seq != 0 ? "#" + std::to_string(progress.in_flight_seq) + " ?"
                   : progress.p2p != nullptr     ? P2PLabel(*progress.p2p)
                   : progress.replay != nullptr  ? "replay " + std::to_string(progress.replay->replay)
                                                 : "-";
  std::string state = StateOf(p, c, progress);
  state += GoneState(p);
  if (BlockedInSync(p)) state += ",blocked-in-sync";
  if (c.async_error) state += ",async-error=" + std::to_string(c.async_error);
  if (c.untracked_ops) state += ",untracked=" + std::to_string(c.untracked_ops);
  if (const auto incident = IncidentOfRow(verdicts, p, c)) state = incident->Text() + "," + state;
  // A job whose processes are all gone has no clock to count against: no age.
  const std::string age = job_gone ? "-" : Age(now_ns, progress.since_ns);
  const std::string rank_of_n = std::to_string(c.rank) + "/" + std::to_string(c.nranks);
  char line[1024];  // a label is at most 18 + 3 + 4 x kCommNameBytes (escaped) = 277 bytes
  std::snprintf(line, sizeof line, "%-5d %-8d %-*s %-11s %-7llu %-7llu %-22s %-8s %-26s %s\n", p.global_rank, p.pid,
                comm_width, format::CommLabel(c.comm_hash, c.name).c_str(), rank_of_n.c_str(),
                static_cast<unsigned long long>(c.last_enqueued_seq),
                static_cast<unsigned long long>(c.last_completed_seq), op.c_str(), age.c_str(), ReplayColumn(c).c_str(),
                state.c_str());
  return line;
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "process vm:28891 (rank 0) drives comm ranks 0-1 of 0xabc, devices 0-1": one line per process
// holding several ranks of one communicator (ncclCommInitAll, one process driving several
// GPUs), whose rows above repeat its pid.
std::string ProcessesDrivingSeveralRanks(const detect::JobFacts& facts) {
  std::string out;
  for (const auto& p : facts.processes) {
    std::map<uint64_t, std::pair<std::vector<int>, std::set<int>>> by_comm;  // comm -> (ranks, devices)
    for (const auto& c : p.comms) {
      auto& [ranks, devices] = by_comm[c.comm_hash];
      ranks.push_back(c.rank);
      if (c.device >= 0) devices.insert(c.device);
    }
    for (const auto& [hash, held] : by_comm) {
      if (held.first.size() < 2) continue;
      out += "process " + format::EscapeForTerminal(p.host) + ":" + std::to_string(p.pid) + " (rank " +
             std::to_string(p.global_rank) + ") drives comm ranks " + format::FormatRangeList(held.first) + " of " +
             format::FormatHex(hash) +
             (held.second.empty() ? "" : ", devices " + format::FormatRangeList(std::vector<int>(held.second.begin(), held.second.end()))) +
             "\n";
    }
  }
  return out;
}

nlohmann::json OrNull(uint64_t value) { return value != 0 ? nlohmann::json(value) : nlohmann::json(nullptr); }

nlohmann::json CommJson(const detect::ProcessFacts& p, const detect::CommFacts& c, uint64_t now_ns,
                        const std::vector<detect::Verdict>& verdicts) {
  const RowProgress progress = ProgressOf(c);
  const detect::RecordFacts* p2p = detect::OldestPendingP2P(c);
  const std::optional<RowIncident> incident = IncidentOfRow(verdicts, p, c);
  const std::optional<detect::Wait> wait = detect::OldestPendingOp(c);
  const bool in_flight = progress.in_flight_seq != 0;
  nlohmann::json replay_json = nullptr;  // the newest replay of a CUDA graph on this communicator
  if (const detect::ReplayFacts* newest = NewestReplay(c)) {
    const detect::ReplayFacts* pending = detect::OldestPendingReplay(c);
    replay_json = {{"replay", newest->replay},
                   {"graph", format::FormatHex(newest->graph)},
                   {"graph_label", detect::GraphLabel(*newest, c.comm_hash)},
                   {"framework_seq", OrNull(newest->framework_seq)},
                   {"in_flight", pending != nullptr ? nlohmann::json(pending->replay) : nlohmann::json(nullptr)}};
  }
  nlohmann::json p2p_json = nullptr;
  if (p2p != nullptr) {
    p2p_json = {{"op", p2p->op},
                {"peer", p2p->peer},
                {"seq", p2p->seq},
                {"framework_seq", OrNull(p2p->framework_seq)},
                {"in_flight_ns", now_ns > p2p->enqueue_ns ? now_ns - p2p->enqueue_ns : 0}};
  }
  return {{"comm", format::FormatHex(c.comm_hash)},
          {"comm_name", c.name.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.name)},
          {"rank", c.rank},
          {"nranks", c.nranks},
          {"device", c.device},
          {"state", std::string(detect::ToString(c.lifecycle))},
          {"last_enqueued_seq", c.last_enqueued_seq},
          {"last_completed_seq", c.last_completed_seq},
          {"in_flight_seq", OrNull(progress.in_flight_seq)},
          {"in_flight_op", progress.in_flight != nullptr ? nlohmann::json(progress.in_flight->op) : nlohmann::json(nullptr)},
          {"in_flight_framework_seq", progress.in_flight != nullptr ? OrNull(progress.in_flight->framework_seq)
                                                                    : nlohmann::json(nullptr)},
          {"in_flight_ns", in_flight && progress.since_ns != 0 && now_ns > progress.since_ns
                               ? nlohmann::json(now_ns - progress.since_ns)
                               : nlohmann::json(nullptr)},
          {"p2p_in_flight", std::move(p2p_json)},
          {"waiting", wait.has_value()},
          {"oldest_wait_ns", wait && wait->since_ns != 0 && now_ns >= wait->since_ns
                                 ? nlohmann::json(now_ns - wait->since_ns)
                                 : nlohmann::json(nullptr)},
          {"async_error", c.async_error},
          {"untracked_ops", c.untracked_ops},
          {"replay", std::move(replay_json)},
          {"incident", incident ? nlohmann::json{{"role", incident->role}, {"kind", incident->kind}}
                                : nlohmann::json(nullptr)}};
}

}  // namespace

uint64_t StatusThresholdNs(const shm::JobSnapshot& snapshot) {
  uint64_t ns = 0;
  for (const auto& p : snapshot.processes) ns = std::max(ns, p.stall_threshold_ns);
  return ns != 0 ? ns : detect::DetectConfig{}.stall_threshold_ns;
}

std::vector<detect::Verdict> JudgeFacts(const detect::JobFacts& facts, uint64_t threshold_ns, uint64_t now_ns) {
  detect::DetectConfig config;
  config.stall_threshold_ns = threshold_ns;
  return detect::Classify(facts, config, now_ns);
}

std::string RenderStatusTable(const shm::JobSnapshot& snapshot, uint64_t now_ns) {
  const detect::JobFacts facts = watch::FactsFromSnapshot(snapshot, watch::kEveryRecordRead);
  const uint64_t threshold = StatusThresholdNs(snapshot);
  const std::vector<detect::Verdict> verdicts = JudgeFacts(facts, threshold, now_ns);
  // The job id comes from shared memory any process of the user may have written.
  std::string out = "job " + format::EscapeForTerminal(snapshot.job_id) + ": " +
                    Plural(facts.processes.size(), "process", "processes") + " on this host\n";
  const int comm_width = CommColumnWidth(facts);
  char header[512];
  std::snprintf(header, sizeof header, "%-5s %-8s %-*s %-11s %-7s %-7s %-22s %-8s %-26s %s\n", "RANK", "PID", comm_width,
                "COMM", "RANK/N", "ENQ", "DONE", "CURRENT", "AGE", "REPLAY", "STATE");
  out += header;
  const bool gone = AllGone(facts);
  for (const auto& p : facts.processes) {
    if (p.comms.empty()) {
      std::string how = GoneState(p);
      if (!how.empty()) how[0] = ' ';
      char line[128];
      std::snprintf(line, sizeof line, "%-5d %-8d (no communicator yet)%s\n", p.global_rank, p.pid, how.c_str());
      out += line;
    }
    for (const auto& c : p.comms) out += Row(p, c, now_ns, gone, verdicts, comm_width);
  }
  out += ProcessesDrivingSeveralRanks(facts);
  if (!verdicts.empty()) {
    out += "incidents, as the watchdog judges them (threshold " + format::FormatDuration(threshold) + "):\n";
    // Summaries name ops and ranks; the op name comes from shared memory.
    for (const detect::Verdict& v : verdicts) {
      out += "  " + detect::ToString(v.kind) + ": " + format::EscapeForTerminal(v.summary) + "\n";
    }
  }
  if (gone) {
    out += "every process of this job is gone (exited or killed); `ncclwatch gc --job " +
           format::EscapeForTerminal(snapshot.job_id) + "` removes what it left in /dev/shm\n";
  }
  return out;
}

nlohmann::json StatusJson(const shm::JobSnapshot& snapshot, uint64_t now_ns) {
  const detect::JobFacts facts = watch::FactsFromSnapshot(snapshot, watch::kEveryRecordRead);
  const uint64_t threshold = StatusThresholdNs(snapshot);
  const std::vector<detect::Verdict> verdicts = JudgeFacts(facts, threshold, now_ns);
  nlohmann::json processes = nlohmann::json::array();
  for (const auto& p : facts.processes) {
    nlohmann::json comms = nlohmann::json::array();
    for (const auto& c : p.comms) comms.push_back(CommJson(p, c, now_ns, verdicts));
    nlohmann::json exit = nullptr;
    if (p.exit.recorded) {
      exit = {{"how", p.exit.signal != 0 ? "signal" : "status"}, {"status", p.exit.status}, {"signal", p.exit.signal}};
    }
    processes.push_back({{"global_rank", p.global_rank},
                         {"pid", p.pid},
                         {"host", p.host},
                         {"alive", p.alive},
                         {"os_state", p.os.state != 0 ? nlohmann::json(std::string(1, p.os.state)) : nlohmann::json(nullptr)},
                         {"wchan", p.os.wchan.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.os.wchan)},
                         {"exit", exit},
                         {"blocked_in_sync", BlockedInSync(p)},
                         {"comms", std::move(comms)}});
  }
  nlohmann::json incidents = nlohmann::json::array();
  for (const detect::Verdict& v : verdicts) {
    incidents.push_back({{"kind", detect::ToString(v.kind)},
                         {"comm", v.comm_hash ? nlohmann::json(format::FormatHex(v.comm_hash)) : nlohmann::json(nullptr)},
                         {"comm_name", v.comm_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.comm_name)},
                         {"seq", v.seq},
                         {"framework_seq", OrNull(v.framework_seq)},
                         {"op", v.op},
                         {"graph", v.graph ? nlohmann::json(format::FormatHex(v.graph)) : nlohmann::json(nullptr)},
                         {"graph_label", v.graph_label.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.graph_label)},
                         {"culprit_ranks", v.culprit_ranks},
                         {"other_ranks", v.other_ranks},
                         {"since_ns", v.since_ns},
                         {"summary", v.summary}});
  }
  return {{"job", snapshot.job_id},
          {"gone", AllGone(facts)},
          {"stall_threshold_ns", threshold},
          {"processes", std::move(processes)},
          {"incidents", std::move(incidents)}};
}

}  // namespace ncclwatch::tools
