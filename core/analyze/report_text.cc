// Every string that came from a dump, a file name or a summary built from them goes through
// Esc(): a dump must not be able to move the cursor or start a line of its own ("\nVERDICT:").
#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "core/analyze/culprit_processes.h"
#include "core/analyze/report.h"
#include "core/analyze/runs.h"
#include "core/analyze/thread_views.h"
#include "core/clock/instant.h"
#include "core/detect/p2p_op.h"
#include "core/detect/verdict.h"
#include "core/format/comm_label.h"
#include "core/format/duration.h"
#include "core/format/escape.h"
#include "core/format/framework_seq.h"
#include "core/format/hex.h"
#include "core/format/nccl_names.h"
#include "core/format/plural.h"
#include "core/format/rank_list.h"

namespace ncclwatch::analyze {
namespace {

using format::CountOf;
using format::FormatRangeList;
using format::FormatRanks;

std::string Esc(const std::string& text) { return format::EscapeForTerminal(text); }

// Beyond this many distinct (state, joined, completed) lines, the rest are counted: a hostile
// set can give each of 2^20 ranks its own.
constexpr size_t kMaxStateLines = 32;

// On a split communicator the culprits' communicator ranks are not the ranks a person finds
// in the job's logs: name their global ranks too. A process that drives several of them
// (ncclCommInitAll, nccl-tests -g 2) has one global rank, if any: it is named as a process by
// the lines above, so its ranks are not "= global" anything. Linear in ranks: 2^20 culprits of
// a 2^20 rank communicator is a legitimate collective hang.
std::string GlobalRanksNote(const Analysis& a) {
  for (const CulpritProcess& p : a.culprit_processes) {
    if (p.comm_ranks.size() > 1) return "";
  }
  std::unordered_map<int, int> global_of;
  for (const auto& r : a.ranks) {
    if (r.global_rank >= 0) global_of.emplace(r.rank, r.global_rank);
  }
  std::vector<int> globals;
  bool differs = false;
  for (int culprit : detect::AllCulpritRanks(a.verdict)) {
    auto it = global_of.find(culprit);
    if (it == global_of.end()) continue;
    globals.push_back(it->second);
    differs = differs || it->second != culprit;
  }
  return differs ? " of the communicator = global " + FormatRanks(globals) : "";
}

// "5.0s" when every row's age formats the same, "5.0s-5.2s" when they differ; "" when no row
// knows it. Ages come from each rank's own dump (its host's clock).
std::string AgeSpan(const std::vector<const RankRow*>& rows, std::optional<uint64_t> RankRow::*age) {
  std::optional<uint64_t> low, high;
  for (const RankRow* r : rows) {
    const std::optional<uint64_t>& value = r->*age;
    if (!value) continue;
    if (!low || *value < *low) low = value;
    if (!high || *value > *high) high = value;
  }
  if (!low) return "";
  const std::string first = format::FormatDuration(*low), last = format::FormatDuration(*high);
  return first == last ? first : first + "-" + last;
}

// "ranks 0,1,3 joined #43 5.0s ago" under the verdict: how long the waiters have waited, as
// of their own dumps (each host's clock; the ages are comparable, the times are not).
void WaitTimes(const Analysis& a, std::ostringstream& out) {
  const auto& v = a.verdict;
  if (v.seq == 0 || detect::IsPointToPointKind(v.kind)) return;
  std::vector<int> waiters;
  std::vector<const RankRow*> rows;
  for (const auto& r : a.ranks) {
    const bool waits = detect::AboutReplay(v) ? r.replays_launched >= v.seq && r.replays_completed < v.seq
                                    : r.last_joined >= v.seq && r.last_completed < v.seq;
    if (!r.has_dump || !waits || !r.waiting_ns) continue;
    waiters.push_back(r.rank);
    rows.push_back(&r);
  }
  if (rows.empty()) return;
  out << "  " << FormatRanks(waiters) << (detect::AboutReplay(v) ? " launched replay " : " joined #") << v.seq << ' '
      << AgeSpan(rows, &RankRow::waiting_ns)
      << " ago and " << format::Agree(format::CountRanks(format::ToRanges(waiters)), "waits", "wait")
      << " in it (ages at each rank's dump)\n";
}

// At most this many culprit processes and events are named in the first lines; --json has them all.
constexpr size_t kMaxProcessLines = 4;
constexpr size_t kMaxEventsShown = 6;

// Who and where: one line per culprit process, however many ranks it drives.
void CulpritLines(const Analysis& a, std::ostringstream& out) {
  for (size_t i = 0; i < a.culprit_processes.size() && i < kMaxProcessLines; ++i) {
    const CulpritProcess& p = a.culprit_processes[i];
    out << "  " << Esc(ProcessLabel(p)) << ": " << Esc(ProcessStateText(p)) << '\n';
  }
  if (a.culprit_processes.size() > kMaxProcessLines) {
    out << "  ... and " << CountOf(a.culprit_processes.size() - kMaxProcessLines, "more process", "more processes")
        << " (see --json)\n";
  }
}

// "then torn down: ncclCommAbort on rank 0 at +8.1s, SIGTERM to rank 1 at +8.4s".
void ThenLine(const Analysis& a, std::ostringstream& out) {
  if (a.then.empty()) return;
  const bool torn_down =
      std::any_of(a.then.begin(), a.then.end(), [](const AfterEvent& e) { return e.kind == AfterEvent::Kind::kTeardown; });
  out << (torn_down ? "  then torn down:" : "  then:");
  for (size_t i = 0; i < a.then.size() && i < kMaxEventsShown; ++i) {
    const AfterEvent& e = a.then[i];
    out << (i ? ", " : " ") << Esc(e.text);
    if (e.after_ns) out << " at +" << format::FormatDuration(*e.after_ns);
  }
  if (a.then.size() > kMaxEventsShown) out << ", and " << CountOf(a.then.size() - kMaxEventsShown, "more event", "more events");
  const bool timed = std::any_of(a.then.begin(), a.then.end(), [](const AfterEvent& e) { return e.after_ns.has_value(); });
  out << (timed ? " (from when the stall began on each host)" : "") << '\n';
}

void AttemptLines(const Analysis& a, std::ostringstream& out) {
  if (a.other_attempts.empty()) return;
  const std::string label = AttemptLabel(a.attempt);
  out << "  " << (label.empty() ? std::string("this attempt") : Esc(label)) << " of " << CountOf(a.run.attempts, "attempt", "attempts")
      << " in this run; the others:\n";
  for (const AttemptLine& line : a.other_attempts) out << "    " << Esc(line.line) << '\n';
}

void Verdict(const Analysis& a, std::ostringstream& out) {
  const auto& v = a.verdict;
  out << "VERDICT: " << detect::ToString(v.kind) << '\n';
  // The answer first: what, since when, who and where, the next step, what happened then.
  out << "  " << Esc(v.summary) << '\n';
  WaitTimes(a, out);
  CulpritLines(a, out);
  if (!a.next_step.empty()) out << "  next: " << Esc(a.next_step) << '\n';
  ThenLine(a, out);
  AttemptLines(a, out);
  if (a.resolution.resolved) {
    out << "  resolved after " << format::FormatDuration(a.resolution.resolved_after_ns)
        << ": every rank that dumped saw the incident complete (slow, not hung)\n";
  }
  // The details.
  if (v.kind != detect::VerdictKind::kNone) {
    if (v.comm_hash) {
      out << "  communicator " << format::CommLabel(v.comm_hash, v.comm_name) << " (" << CountOf(v.nranks, "rank", "ranks") << ")\n";
    }
    if (v.seq && detect::AboutReplay(v)) {
      out << "  replay " << v.seq << " of " << Esc(v.graph_label) << " (key " << format::FormatHex(v.graph)
          << (v.framework_seq != 0 ? "; its first op is framework seq " + std::to_string(v.framework_seq) : "")
          << ")\n";
    } else if (v.seq && detect::IsPointToPointKind(v.kind)) {
      out << "  " << Esc(v.op) << " #" << v.seq << " (numbered per peer)" << format::FrameworkSeqNote(v.framework_seq, true)
          << '\n';
    } else if (v.seq) {
      out << "  collective #" << v.seq << ' ' << Esc(v.op) << format::FrameworkSeqNote(v.framework_seq, false) << '\n';
    } else if (!v.op.empty()) {
      out << "  op " << Esc(v.op) << '\n';
    }
    const std::vector<int> culprits = detect::AllCulpritRanks(v);
    out << "  " << format::Agree(culprits.size(), "culprit", "culprits") << ": " << FormatRanks(culprits)
        << (v.kind == detect::VerdictKind::kSyncStuck ? " (global)" : GlobalRanksNote(a)) << '\n';
  }
  out << "  read " << CountOf(a.dumps_read, "dump", "dumps") << " from " << CountOf(a.hosts.size(), "host", "hosts");
  if (!a.hosts.empty()) {
    out << ":";
    for (size_t i = 0; i < a.hosts.size() && i < 8; ++i) out << ' ' << Esc(a.hosts[i]);
    if (a.hosts.size() > 8) out << " ...";
  }
  out << "; missing ranks: " << FormatRangeList(a.missing_ranks);
  if (a.dumps_after) out << "; " << CountOf(a.dumps_after, "later dump", "later dumps") << " told under then";
  out << "\n\n";
}

// Thousands of ranks usually fall into a few states: one line per state.
void RankStates(const Analysis& a, std::ostringstream& out) {
  if (a.ranks.empty()) return;
  using Key = std::tuple<std::string, uint64_t, uint64_t, bool>;
  std::map<Key, std::vector<const RankRow*>> groups;
  // A verdict about a graph's replay: how far each rank got in that graph's replays.
  const bool replays = detect::AboutReplay(a.verdict);
  for (const auto& r : a.ranks) {
    groups[{r.state, replays ? r.replays_launched : r.last_joined, replays ? r.replays_completed : r.last_completed,
            r.has_dump}]
        .push_back(&r);
  }
  out << (replays ? "EVIDENCE: each rank's last launched and last completed replay of the graph\n"
                  : "EVIDENCE: each rank's last joined and last completed collective\n");
  size_t lines = 0, rest_ranks = 0;
  for (const auto& [key, rows] : groups) {
    if (lines++ >= kMaxStateLines) {
      rest_ranks += rows.size();
      continue;
    }
    const auto& [state, joined, completed, has_dump] = key;
    std::vector<int> ranks;
    ranks.reserve(rows.size());
    for (const RankRow* r : rows) ranks.push_back(r->rank);
    out << "  " << FormatRanks(ranks) << ": ";
    if (has_dump && replays) out << "launched replay " << joined << ", completed replay " << completed << ", ";
    if (has_dump && !replays) out << "joined #" << joined << ", completed #" << completed << ", ";
    out << Esc(state);
    const std::string waiting = AgeSpan(rows, &RankRow::waiting_ns);
    if (!waiting.empty()) out << (state.rfind("waiting in ", 0) == 0 ? " for " : ", waiting for ") << waiting;
    const std::string progress = AgeSpan(rows, &RankRow::last_progress_ns);
    if (!progress.empty()) out << "; last progress " << progress << " ago";
    out << '\n';
  }
  if (lines > kMaxStateLines) {
    out << "  ... and " << CountOf(lines - kMaxStateLines, "more state", "more states") << " of "
        << CountOf(rest_ranks, "rank", "ranks") << " (see --json)\n";
  }
  out << '\n';
}

std::string Describe(const FingerprintCell& c) {
  if (!c.known) return "(no record)";
  std::string s = Esc(c.op) + "(count=" + std::to_string(c.count) + " datatype=" + format::DataTypeName(c.datatype);
  if (c.redop >= 0) s += " redop=" + format::RedOpName(c.redop);
  if (c.root >= 0) s += " root=" + std::to_string(c.root);
  return s + ")";
}

void Fingerprints(const Analysis& a, std::ostringstream& out) {
  if (a.fingerprints.empty()) return;
  out << "EVIDENCE: fingerprints side by side\n";
  for (const auto& row : a.fingerprints) {
    std::map<std::string, std::vector<int>> by_fp;
    for (const auto& c : row.cells) by_fp[Describe(c)].push_back(c.rank);
    out << "  #" << row.seq << (row.differs ? "  DIFFERS" : "") << '\n';
    for (const auto& [fp, ranks] : by_fp) out << "      " << FormatRanks(ranks) << ": " << fp << '\n';
  }
  out << '\n';
}

// "rank 1: waits in Recv #3 from rank 0 (count=4096 datatype=float32)", "rank 0: has not posted Send #3 to rank 1".
void P2POps(const Analysis& a, std::ostringstream& out) {
  if (a.p2p.empty()) return;
  out << "EVIDENCE: point-to-point ops of the pair or cycle\n";
  for (const auto& r : a.p2p) {
    const bool sends = detect::P2PDirectionOf(r.op) == detect::P2PDirection::kSend;
    const std::string op = Esc(r.op) + " #" + std::to_string(r.seq) + (sends ? " to rank " : " from rank ") +
                           std::to_string(r.peer);
    out << "  rank " << r.rank << ": ";
    if (!r.posted) {
      out << "has not posted " << op << '\n';
      continue;
    }
    out << (r.complete ? "posted " : "waits in ") << op << " (count=" << r.count
        << " datatype=" << format::DataTypeName(r.datatype) << ")"
        << (r.complete ? ", complete" : "") << '\n';
  }
  out << '\n';
}

void Stacks(const Analysis& a, std::ostringstream& out) {
  if (a.stacks.empty() && a.culprits_without_stacks == 0) return;
  out << "EVIDENCE: culprit stacks (innermost frame first; Python frames where the interpreter runs them)\n";
  for (const auto& g : a.stacks) {
    out << "  " << FormatRanks(g.ranks) << " (" << Esc(g.where);
    if (g.processes > 1) out << " and " << CountOf(g.processes - 1, "other process", "other processes") << " with the same stacks";
    out << "): " << CountOf(g.threads_total, "thread", "threads") << '\n';
    if (g.threads.empty()) out << "    (no stacks captured)\n";
    for (const auto& t : g.threads) {
      out << "    " << Esc(ThreadHeader(t)) << '\n';
      for (const auto& f : t.frames) out << "      " << Esc(FrameText(f)) << '\n';
      if (t.hidden_frames) {
        out << "      (" << CountOf(t.hidden_frames, "frame", "frames")
            << " of ncclwatch, libc waits or the interpreter hidden)\n";
      }
    }
    if (g.threads_not_shown) {
      out << "    " << CountOf(g.threads_not_shown, "more thread", "more threads") << " not shown (idle with no frame of their own, or past the first " << kMaxThreadViewsPerProcess
          << " stacks; every thread is in the dump)\n";
    }
    if (!g.python_unavailable.empty()) out << "    python stacks unavailable: " << Esc(g.python_unavailable) << '\n';
  }
  if (a.culprits_without_stacks) {
    out << "  " << CountOf(a.culprits_without_stacks, "culprit", "culprits") << " left no dump, so no stacks (see above)\n";
  }
  out << '\n';
}

void Hints(const Analysis& a, std::ostringstream& out) {
  if (a.hints.empty()) return;
  out << "WHAT TO TRY\n";
  for (const auto& h : a.hints) {
    out << "  [" << Esc(h.id) << "] " << Esc(h.advice) << '\n';
    for (const auto& e : h.evidence) out << "      evidence: " << Esc(e) << '\n';
  }
  out << '\n';
}

void Lines(const char* title, const std::vector<std::string>& lines, std::ostringstream& out) {
  if (lines.empty()) return;
  out << title << '\n';
  for (const auto& l : lines) out << "  " << Esc(l) << '\n';
}

void RenderOne(const Analysis& a, std::ostringstream& out) {
  Verdict(a, out);
  RankStates(a, out);
  Fingerprints(a, out);
  P2POps(a, out);
  Stacks(a, out);
  Hints(a, out);
  Lines("NOTES", a.notes, out);
}

// "RUN 1 of 2: job none, host vm, 2 attempts, 6 dumps, the last at 2026-12-01T10:00:01Z".
std::string RunHeading(const Analysis& a, size_t index, size_t runs) {
  std::string text = "RUN " + std::to_string(index) + " of " + std::to_string(runs) + ":";
  if (!a.run.job_ids.empty()) {
    text += " job";
    for (const std::string& id : a.run.job_ids) text += " " + Esc(id);
    text += ",";
  }
  text += " " + std::string(format::Agree(a.run.hosts.size(), "host", "hosts"));
  for (size_t i = 0; i < a.run.hosts.size() && i < 8; ++i) text += " " + Esc(a.run.hosts[i]);
  if (a.run.hosts.size() > 8) text += " ...";
  text += ", " + CountOf(a.run.attempts, "attempt", "attempts") + ", " + CountOf(a.run.dumps, "dump", "dumps");
  if (a.run.last_unix_ns) text += ", the last at " + clock::FormatIso8601Utc(a.run.last_unix_ns);
  return text;
}

}  // namespace

std::string RenderTextReport(const Analysis& a) {
  std::ostringstream out;
  const size_t runs = 1 + a.other_runs.size();
  if (runs > 1) {
    out << runs << " unrelated runs in these directories (different launchers and communicators), reported apart, "
        << "the most recent first\n\n";
    out << RunHeading(a, 1, runs) << '\n';
  }
  RenderOne(a, out);
  for (size_t i = 0; i < a.other_runs.size(); ++i) {
    out << '\n' << RunHeading(a.other_runs[i], i + 2, runs) << '\n';
    RenderOne(a.other_runs[i], out);
  }
  Lines("UNUSABLE FILES", a.rejected, out);
  return out.str();
}

}  // namespace ncclwatch::analyze
