#include <optional>

#include <nlohmann/json.hpp>

#include "core/analyze/culprit_processes.h"
#include "core/analyze/report.h"
#include "core/analyze/thread_views.h"
#include "core/format/hex.h"
#include "core/format/nccl_names.h"

namespace ncclwatch::analyze {
namespace {

using nlohmann::json;

// Ages are exact nanoseconds; null when the dump lacks the times.
json OptionalNs(const std::optional<uint64_t>& ns) { return ns ? json(*ns) : json(nullptr); }

// The verdict and, apart in the Analysis but in this object for readers, its resolution.
json VerdictJson(const detect::Verdict& v, const VerdictResolution& resolution) {
  return json{{"kind", detect::ToString(v.kind)},
              {"comm", v.comm_hash ? json(format::FormatHex(v.comm_hash)) : json(nullptr)},
              {"comm_name", v.comm_name.empty() ? json(nullptr) : json(v.comm_name)},
              {"nranks", v.nranks},
              {"seq", v.seq},
              {"framework_seq", v.framework_seq ? json(v.framework_seq) : json(nullptr)},
              {"op", v.op},
              {"graph", v.graph ? json(format::FormatHex(v.graph)) : json(nullptr)},
              {"graph_label", v.graph_label.empty() ? json(nullptr) : json(v.graph_label)},
              {"culprit_ranks", detect::AllCulpritRanks(v)},
              {"other_ranks", v.other_ranks},
              {"summary", v.summary},
              {"source", "merged"},  // derived from the facts of every dump, never one rank's own verdict
              {"resolved", resolution.resolved},
              {"resolved_after_ns", resolution.resolved_after_ns}};
}

// One object per rank, built in one go: a communicator may have 2^20 ranks.
json RanksJson(const Analysis& a) {
  json rows = json::array();
  rows.get_ref<json::array_t&>().reserve(a.ranks.size());
  for (const auto& r : a.ranks) {
    if (!r.has_dump) {
      rows.push_back(json{{"rank", r.rank}, {"has_dump", false}, {"state", r.state}});
      continue;
    }
    rows.push_back(json{{"rank", r.rank},
                        {"has_dump", true},
                        {"state", r.state},
                        {"global_rank", r.global_rank},
                        {"host", r.host},
                        {"pid", r.pid},
                        {"init_done", r.init_done},
                        {"last_joined", r.last_joined},
                        {"last_completed", r.last_completed},
                        {"replays_launched", r.replays_launched},
                        {"replays_completed", r.replays_completed},
                        {"async_error", r.async_error},
                        {"async_error_name", format::NcclResultName(r.async_error)},
                        {"waiting_ns", OptionalNs(r.waiting_ns)},
                        {"last_progress_ns", OptionalNs(r.last_progress_ns)}});
  }
  return rows;
}

json FingerprintsJson(const Analysis& a) {
  json rows = json::array();
  for (const auto& row : a.fingerprints) {
    json cells = json::array();
    for (const auto& c : row.cells) {
      cells.push_back(c.known ? json{{"rank", c.rank},
                                     {"op", c.op},
                                     {"count", c.count},
                                     {"datatype", c.datatype},
                                     {"datatype_name", format::DataTypeName(c.datatype)},
                                     {"redop", c.redop},
                                     {"redop_name", format::RedOpName(c.redop)},
                                     {"root", c.root}}
                              : json{{"rank", c.rank}, {"op", nullptr}});
    }
    rows.push_back(json{{"seq", row.seq}, {"differs", row.differs}, {"by_rank", std::move(cells)}});
  }
  return rows;
}

json P2PJson(const Analysis& a) {
  json rows = json::array();
  for (const auto& r : a.p2p) {
    rows.push_back(json{{"rank", r.rank}, {"op", r.op}, {"peer", r.peer}, {"seq", r.seq}, {"posted", r.posted},
                        {"complete", r.complete}, {"count", r.count}, {"datatype", r.datatype},
                        {"datatype_name", format::DataTypeName(r.datatype)}});
  }
  return rows;
}

json StacksJson(const Analysis& a) {
  json groups = json::array();
  for (const auto& g : a.stacks) {
    json threads = json::array();
    for (const auto& t : g.threads) {
      json frames = json::array();
      for (const auto& f : t.frames) {
        frames.push_back(f.python ? json{{"kind", "python"}, {"func", f.function}, {"file", f.file}, {"line", f.line}}
                                  : json{{"kind", "native"},
                                         {"func", f.function},
                                         {"module", f.module},
                                         {"offset", format::FormatHex(f.offset)}});
      }
      threads.push_back(json{{"header", ThreadHeader(t)},
                             {"tids", t.tids},
                             {"names", t.names},
                             {"python_thread_id", t.python_thread_id},
                             {"python_name", t.python_name},
                             {"active", t.active},
                             {"answered", t.answered},
                             {"state", t.state},
                             {"blocked_in", t.blocked_in},
                             {"in_host_sync", t.in_host_sync},
                             {"python_merged", t.python_merged},
                             {"frames", std::move(frames)},
                             {"hidden_frames", t.hidden_frames}});
    }
    groups.push_back(json{{"ranks", g.ranks},
                          {"where", g.where},
                          {"processes", g.processes},
                          {"threads", std::move(threads)},
                          {"threads_total", g.threads_total},
                          {"threads_not_shown", g.threads_not_shown},
                          {"python_unavailable", g.python_unavailable}});
  }
  return groups;
}

json AttemptJson(const detect::Attempt& attempt) {
  if (!attempt.known()) return nullptr;
  return json{{"restart", attempt.restart}, {"requeue", attempt.requeue}};
}

json CulpritProcessesJson(const Analysis& a) {
  json out = json::array();
  for (const CulpritProcess& p : a.culprit_processes) {
    const bool known = p.state != ProcessState::kNoDump;
    json os = nullptr;
    if (p.os.state != 0) os = json{{"state", std::string(1, p.os.state)}, {"wchan", p.os.wchan}, {"kernel_stack", p.os.kernel_stack}};
    json exit = nullptr;
    if (p.state == ProcessState::kGone) {
      exit = json{{"recorded", p.exit.recorded}, {"status", p.exit.status}, {"signal", p.exit.signal}, {"text", ExitText(p.exit)}};
    }
    out.push_back(json{{"label", ProcessLabel(p)},
                       {"ranks", p.ranks},
                       {"comm_ranks", p.comm_ranks},
                       {"devices", p.devices},
                       {"global_rank", known && p.global_rank >= 0 ? json(p.global_rank) : json(nullptr)},
                       {"host", known ? json(p.host) : json(nullptr)},
                       {"pid", known ? json(p.pid) : json(nullptr)},
                       {"state", ProcessStateName(p.state)},
                       {"state_text", ProcessStateText(p)},
                       {"os", std::move(os)},
                       {"exit", std::move(exit)},
                       {"described_by", p.described_by.empty() ? json(nullptr) : json(p.described_by)},
                       {"python", p.python},
                       {"where", p.where.empty() ? json(nullptr) : json(p.where)},
                       {"next", p.next}});
  }
  return out;
}

const char* EventKindName(AfterEvent::Kind kind) {
  switch (kind) {
    case AfterEvent::Kind::kTeardown: return "teardown";
    case AfterEvent::Kind::kExit: return "exit";
    case AfterEvent::Kind::kIncident: return "incident";
  }
  return "teardown";
}

json ThenJson(const Analysis& a) {
  json out = json::array();
  for (const AfterEvent& e : a.then) {
    out.push_back(json{{"kind", EventKindName(e.kind)}, {"who", e.who}, {"host", e.host}, {"pid", e.pid}, {"what", e.what},
                       {"text", e.text}, {"after_ns", OptionalNs(e.after_ns)}});
  }
  return out;
}

json OtherAttemptsJson(const Analysis& a) {
  json out = json::array();
  for (const AttemptLine& l : a.other_attempts) {
    out.push_back(json{{"attempt", AttemptJson(l.attempt)}, {"kind", detect::ToString(l.kind)}, {"culprit_ranks", l.culprit_ranks},
                       {"resolved", l.resolved}, {"dumps_read", l.dumps}, {"line", l.line}});
  }
  return out;
}

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kNoHang: return "no_hang";
    case Outcome::kHang: return "hang";
    case Outcome::kResolvedHang: return "resolved_hang";
  }
  return "hang";
}

// One run's analysis: the top level of the report, and each of other_runs[].
json RunJson(const Analysis& a) {
  json hints = json::array();
  for (const auto& h : a.hints) hints.push_back(json{{"id", h.id}, {"advice", h.advice}, {"evidence", h.evidence}});
  return json{{"verdict", VerdictJson(a.verdict, a.resolution)},
              {"outcome", OutcomeName(a.outcome)},
              {"culprit_processes", CulpritProcessesJson(a)},
              {"next_step", a.next_step.empty() ? json(nullptr) : json(a.next_step)},
              {"then", ThenJson(a)},
              {"attempt", AttemptJson(a.attempt)},
              {"other_attempts", OtherAttemptsJson(a)},
              {"run", json{{"hosts", a.run.hosts},
                           {"job_ids", a.run.job_ids},
                           {"attempts", a.run.attempts},
                           {"dumps", a.run.dumps},
                           {"first_unix_ns", a.run.first_unix_ns},
                           {"last_unix_ns", a.run.last_unix_ns}}},
              {"dumps_read", a.dumps_read},
              {"dumps_after", a.dumps_after},
              {"hosts", a.hosts},
              {"missing_ranks", a.missing_ranks},
              {"ranks", RanksJson(a)},
              {"fingerprints", FingerprintsJson(a)},
              {"p2p", P2PJson(a)},
              {"stacks", StacksJson(a)},
              {"culprits_without_stacks", a.culprits_without_stacks},
              {"hints", std::move(hints)},
              {"notes", a.notes}};
}

}  // namespace

nlohmann::json RenderJsonReport(const Analysis& a) {
  json out = RunJson(a);
  out["schema"] = kAnalysisSchemaName;
  out["version"] = kAnalysisSchemaVersion;
  out["outcome"] = OutcomeName(OverallOutcome(a));
  out["run_outcome"] = OutcomeName(a.outcome);
  out["rejected"] = a.rejected;
  json others = json::array();
  for (const Analysis& other : a.other_runs) others.push_back(RunJson(other));
  out["other_runs"] = std::move(others);
  return out;
}

}  // namespace ncclwatch::analyze
