#include "tools/cli/status_table.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "core/detect/detector.h"
#include "core/detect/replay_state.h"
#include "core/format/comm_label.h"
#include "core/format/duration.h"
#include "core/format/escape.h"
#include "core/format/hex.h"
#include "core/shm/record_flags.h"
#include "core/watch/facts_from_snapshot.h"

namespace ncclwatch::tools {
namespace {

const char* LifecycleName(shm::CommState state) {
  switch (state) {
    case shm::CommState::kFree: return "free";
    case shm::CommState::kInitializing: return "initializing";
    case shm::CommState::kReady: return "ready";
    case shm::CommState::kInitFailed: return "init-failed";
    case shm::CommState::kFinalized: return "finalized";
    case shm::CommState::kDestroyed: return "destroyed";
    case shm::CommState::kAborted: return "aborted";
    case shm::CommState::kRevoked: return "revoked";
    case shm::CommState::kSuspended: return "suspended";
  }
  return "unknown";
}

std::string Age(uint64_t now_ns, uint64_t since_ns) {
  if (since_ns == 0 || now_ns < since_ns) return "-";
  return format::FormatDuration(now_ns - since_ns);
}

// The oldest collective that is enqueued but not complete, as the detector counts completion
// (`completed`: detect::EffectiveLastCompleted, so a collective captured into a CUDA graph,
// which owes no completion of its own, is not shown in flight).
const shm::RecordView* Current(const shm::CommView& c, uint64_t completed) {
  if (c.last_enqueued_seq <= completed) return nullptr;
  for (const auto& r : c.records) {
    if (!shm::IsPointToPoint(r.op) && r.seq == completed + 1) return &r;
  }
  return nullptr;
}

// The oldest point-to-point op posted and not seen complete, among those whose completion is
// published (captured, failed, aborted and untracked ones never are).
const shm::RecordView* OldestPendingP2P(const shm::CommView& c) {
  constexpr uint32_t kNeverPublished =
      shm::kRecordCaptured | shm::kRecordFailed | shm::kRecordUntracked | shm::kRecordAborted;
  const shm::RecordView* oldest = nullptr;
  for (const auto& r : c.records) {
    if (!shm::IsPointToPoint(r.op) || r.complete_ns != 0 || (r.flags & kNeverPublished) != 0) continue;
    if (oldest == nullptr || r.enqueue_ns < oldest->enqueue_ns) oldest = &r;
  }
  return oldest;
}

// "Recv from 1 (#3)": the k-th op of that direction towards that peer.
std::string P2PLabel(const shm::RecordView& r) {
  const bool receives = r.op == shm::Op::kRecv;
  return std::string(shm::OpName(r.op)) + (receives ? " from " : " to ") + std::to_string(r.root_or_peer) + " (#" +
         std::to_string(r.seq) + ")";
}

bool BlockedInSync(const shm::ProcessView& p) {
  for (const auto& s : p.sync_slots) {
    if (s.blocked_since_ns != 0) return true;
  }
  return false;
}

// ",EXITED(status 0)", ",EXITED(signal 6)" for a process that recorded how it left; ",DEAD" for
// one gone without a word (killed, crashed).
std::string GoneState(const shm::ProcessView& p) {
  if (p.exited && p.exit_how == shm::ExitHow::kSignal) return ",EXITED(signal " + std::to_string(p.exit_signal) + ")";
  if (p.exited) return ",EXITED(status " + std::to_string(p.exit_status) + ")";
  return p.alive ? "" : ",DEAD";
}

bool AllGone(const shm::JobSnapshot& snapshot) {
  for (const auto& p : snapshot.processes) {
    if (p.alive && !p.exited) return false;
  }
  return !snapshot.processes.empty();
}

// What the incidents say of one row: the rank a verdict blames (for sync_stuck, every row of
// the blocked process) is its culprit; a rank that waits on one, a waiter. nullopt when no
// verdict is about it.
struct RowIncident {
  const char* role;  // "culprit" or "waits"
  std::string kind;
  std::string Text() const { return std::string(role) + ":" + kind; }
};

std::optional<RowIncident> IncidentOfRow(const std::vector<detect::Verdict>& verdicts, const shm::ProcessView& p,
                                         const shm::CommView& c) {
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
int CommColumnWidth(const shm::JobSnapshot& snapshot) {
  size_t width = 18;  // "0x" and 16 digits
  for (const auto& p : snapshot.processes) {
    for (const auto& c : p.comms) width = std::max(width, format::CommLabel(c.comm_hash, c.name).size());
  }
  return static_cast<int>(width);
}

// The communicator's CUDA graph replays as the detector reads them (replay_state.h): the newest
// launch, and the oldest one not complete; and its collectives' completion.
struct CommProgress {
  detect::CommFacts facts;
  const detect::ReplayFacts* newest = nullptr;
  const detect::ReplayFacts* pending = nullptr;
};
CommProgress ProgressOfComm(const shm::CommView& c) {
  CommProgress out{watch::CommFactsFromSnapshot(c, 0)};  // no records kept: the replays are read here
  for (const detect::ReplayFacts& r : out.facts.replays) {
    if (!r.failed && (out.newest == nullptr || r.enqueue_ns > out.newest->enqueue_ns)) out.newest = &r;
  }
  out.pending = detect::OldestPendingReplay(out.facts);
  return out;
}

// The REPLAY column: "30 [AllReduce from #2]", the newest replay's number and its graph; "-".
std::string ReplayColumn(const CommProgress& replays) {
  if (replays.newest == nullptr) return "-";
  return std::to_string(replays.newest->replay) + " [" + detect::GraphOpsText(*replays.newest) + "]";
}

std::string Row(const shm::ProcessView& p, const shm::CommView& c, uint64_t now_ns, bool job_gone,
                const std::vector<detect::Verdict>& verdicts, int comm_width) {
  const CommProgress replays = ProgressOfComm(c);
  const uint64_t completed = replays.facts.last_completed_seq;
  const shm::RecordView* current = Current(c, completed);
  const shm::RecordView* p2p = current ? nullptr : OldestPendingP2P(c);
  const detect::ReplayFacts* replay = current || p2p ? nullptr : replays.pending;
  std::string op = current ? "#" + std::to_string(current->seq) + " " + shm::OpName(current->op)
                   : c.last_enqueued_seq > completed ? "#" + std::to_string(completed + 1) + " ?"
                   : p2p                                        ? P2PLabel(*p2p)
                   : replay                                     ? "replay " + std::to_string(replay->replay)
                                                                : "-";
  uint64_t since = current ? current->enqueue_ns
                   : p2p   ? p2p->enqueue_ns
                   : replay ? replay->enqueue_ns
                   : c.last_completed_ns ? c.last_completed_ns
                                         : c.init_done_ns ? c.init_done_ns : c.init_start_ns;
  std::string state = LifecycleName(c.state);
  if (c.state == shm::CommState::kReady) {
    state = c.last_enqueued_seq > completed || p2p != nullptr || replay != nullptr ? "in-flight" : "idle";
  }
  state += GoneState(p);
  if (BlockedInSync(p)) state += ",blocked-in-sync";
  if (c.async_error) state += ",async-error=" + std::to_string(c.async_error);
  if (c.untracked_ops) state += ",untracked=" + std::to_string(c.untracked_ops);
  if (const auto incident = IncidentOfRow(verdicts, p, c)) state = incident->Text() + "," + state;
  // A job whose processes are all gone has no clock to count against: no age.
  const std::string age = job_gone ? "-" : Age(now_ns, since);
  const std::string rank_of_n = std::to_string(c.rank) + "/" + std::to_string(c.nranks);
  char line[1024];  // a label is at most 18 + 3 + 4 x kCommNameBytes (escaped) = 277 bytes
  std::snprintf(line, sizeof line, "%-5d %-8d %-*s %-11s %-7llu %-7llu %-22s %-8s %-26s %s\n", p.global_rank, p.pid,
                comm_width, format::CommLabel(c.comm_hash, c.name).c_str(), rank_of_n.c_str(),
                static_cast<unsigned long long>(c.last_enqueued_seq),
                static_cast<unsigned long long>(completed), op.c_str(), age.c_str(),
                ReplayColumn(replays).c_str(), state.c_str());
  return line;
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

uint64_t StatusThresholdNs(const shm::JobSnapshot& snapshot) {
  uint32_t ms = 0;
  for (const auto& p : snapshot.processes) ms = std::max(ms, p.stall_threshold_ms);
  return ms != 0 ? ms * detect::kNsPerMs : detect::DetectConfig{}.stall_threshold_ns;
}

std::vector<detect::Verdict> JudgeSnapshot(const shm::JobSnapshot& snapshot, uint64_t now_ns) {
  detect::DetectConfig config;
  config.stall_threshold_ns = StatusThresholdNs(snapshot);
  return detect::Classify(watch::FactsFromSnapshot(snapshot), config, now_ns);
}

std::string RenderStatusTable(const shm::JobSnapshot& snapshot, uint64_t now_ns) {
  const std::vector<detect::Verdict> verdicts = JudgeSnapshot(snapshot, now_ns);
  // The job id comes from shared memory any process of the user may have written.
  std::string out = "job " + format::EscapeForTerminal(snapshot.job_id) + ": " +
                    Plural(snapshot.processes.size(), "process", "processes") + " on this host\n";
  const int comm_width = CommColumnWidth(snapshot);
  char header[512];
  std::snprintf(header, sizeof header, "%-5s %-8s %-*s %-11s %-7s %-7s %-22s %-8s %-26s %s\n", "RANK", "PID", comm_width,
                "COMM", "RANK/N", "ENQ", "DONE", "CURRENT", "AGE", "REPLAY", "STATE");
  out += header;
  const bool gone = AllGone(snapshot);
  for (const auto& p : snapshot.processes) {
    if (p.comms.empty()) {
      std::string how = GoneState(p);
      if (!how.empty()) how[0] = ' ';
      char line[128];
      std::snprintf(line, sizeof line, "%-5d %-8d (no communicator yet)%s\n", p.global_rank, p.pid, how.c_str());
      out += line;
    }
    for (const auto& c : p.comms) out += Row(p, c, now_ns, gone, verdicts, comm_width);
  }
  if (!verdicts.empty()) {
    out += "incidents, as the watchdog judges them (threshold " +
           format::FormatDuration(StatusThresholdNs(snapshot)) + "):\n";
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
  const std::vector<detect::Verdict> verdicts = JudgeSnapshot(snapshot, now_ns);
  nlohmann::json processes = nlohmann::json::array();
  for (const auto& p : snapshot.processes) {
    nlohmann::json comms = nlohmann::json::array();
    for (const auto& c : p.comms) {
      const CommProgress replays = ProgressOfComm(c);
      const shm::RecordView* current = Current(c, replays.facts.last_completed_seq);
      const shm::RecordView* p2p = OldestPendingP2P(c);
      const std::optional<RowIncident> incident = IncidentOfRow(verdicts, p, c);
      nlohmann::json replay = nullptr;  // the newest replay of a CUDA graph on this communicator
      if (replays.newest != nullptr) {
        replay = {{"replay", replays.newest->replay},
                  {"graph", format::FormatHex(replays.newest->graph)},
                  {"graph_label", detect::GraphLabel(*replays.newest, c.comm_hash)},
                  {"framework_seq", replays.newest->framework_seq ? nlohmann::json(replays.newest->framework_seq)
                                                                  : nlohmann::json(nullptr)},
                  {"in_flight", replays.pending != nullptr ? nlohmann::json(replays.pending->replay)
                                                           : nlohmann::json(nullptr)}};
      }
      comms.push_back({{"comm", format::FormatHex(c.comm_hash)},
                       {"comm_name", c.name.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.name)},
                       {"rank", c.rank},
                       {"nranks", c.nranks},
                       {"state", LifecycleName(c.state)},
                       {"last_enqueued_seq", c.last_enqueued_seq},
                       {"last_completed_seq", replays.facts.last_completed_seq},
                       {"in_flight_seq", current ? nlohmann::json(current->seq) : nlohmann::json(nullptr)},
                       {"in_flight_op", current ? nlohmann::json(shm::OpName(current->op)) : nlohmann::json(nullptr)},
                       {"in_flight_framework_seq", current && current->framework_seq
                                                       ? nlohmann::json(current->framework_seq)
                                                       : nlohmann::json(nullptr)},
                       {"in_flight_ns", current && now_ns > current->enqueue_ns
                                            ? nlohmann::json(now_ns - current->enqueue_ns)
                                            : nlohmann::json(nullptr)},
                       {"p2p_in_flight", p2p ? nlohmann::json{{"op", shm::OpName(p2p->op)},
                                                              {"peer", p2p->root_or_peer},
                                                              {"seq", p2p->seq},
                                                              {"framework_seq", p2p->framework_seq
                                                                                    ? nlohmann::json(p2p->framework_seq)
                                                                                    : nlohmann::json(nullptr)},
                                                              {"in_flight_ns", now_ns > p2p->enqueue_ns
                                                                                   ? now_ns - p2p->enqueue_ns
                                                                                   : 0}}
                                             : nlohmann::json(nullptr)},
                       {"async_error", c.async_error},
                       {"untracked_ops", c.untracked_ops},
                       {"replay", std::move(replay)},
                       {"incident", incident ? nlohmann::json{{"role", incident->role}, {"kind", incident->kind}}
                                             : nlohmann::json(nullptr)}});
    }
    nlohmann::json exit = nullptr;
    if (p.exited) {
      exit = {{"how", p.exit_how == shm::ExitHow::kSignal ? "signal" : "status"},
              {"status", p.exit_status},
              {"signal", p.exit_signal}};
    }
    processes.push_back({{"global_rank", p.global_rank},
                         {"pid", p.pid},
                         {"host", p.host},
                         {"alive", p.alive && !p.exited},
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
                         {"framework_seq", v.framework_seq ? nlohmann::json(v.framework_seq) : nlohmann::json(nullptr)},
                         {"op", v.op},
                         {"graph", v.graph ? nlohmann::json(format::FormatHex(v.graph)) : nlohmann::json(nullptr)},
                         {"graph_label", v.graph_label.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.graph_label)},
                         {"culprit_ranks", v.culprit_ranks},
                         {"other_ranks", v.other_ranks},
                         {"since_ns", v.since_ns},
                         {"summary", v.summary}});
  }
  return {{"job", snapshot.job_id},
          {"gone", AllGone(snapshot)},
          {"stall_threshold_ns", StatusThresholdNs(snapshot)},
          {"processes", std::move(processes)},
          {"incidents", std::move(incidents)}};
}

}  // namespace ncclwatch::tools
