// Every string that came from a dump, a file name or a summary built from them goes through
// Esc(): a dump must not be able to move the cursor or start a line of its own ("\nVERDICT:").
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "core/analyze/report.h"
#include "core/detect/p2p_op.h"
#include "core/detect/verdict.h"
#include "core/format/duration.h"
#include "core/format/escape.h"
#include "core/format/hex.h"
#include "core/format/rank_list.h"

namespace ncclwatch::analyze {
namespace {

using format::FormatRangeList;
using format::FormatRanks;

std::string Esc(const std::string& text) { return format::EscapeForTerminal(text); }

// Beyond this many distinct (state, joined, completed) lines, the rest are counted: a hostile
// set can give each of 2^20 ranks its own.
constexpr size_t kMaxStateLines = 32;

// On a split communicator the culprits' communicator ranks are not the ranks a person finds
// in the job's logs: name their global ranks too. Linear in ranks: 2^20 culprits of a 2^20
// rank communicator is a legitimate collective hang.
std::string GlobalRanksNote(const Analysis& a) {
  std::unordered_map<int, int> global_of;
  for (const auto& r : a.ranks) {
    if (r.global_rank >= 0) global_of.emplace(r.rank, r.global_rank);
  }
  std::vector<int> globals;
  bool differs = false;
  for (int culprit : a.verdict.ranks) {
    auto it = global_of.find(culprit);
    if (it == global_of.end()) continue;
    globals.push_back(it->second);
    differs = differs || it->second != culprit;
  }
  return differs ? " of the communicator = global " + FormatRanks(globals) : "";
}

void Verdict(const Analysis& a, std::ostringstream& out) {
  const auto& v = a.verdict;
  out << "VERDICT: " << detect::ToString(v.kind) << '\n';
  if (v.kind != detect::VerdictKind::kNone) {
    if (v.comm_hash) out << "  communicator " << format::FormatHex(v.comm_hash) << " (" << v.nranks << " ranks)\n";
    if (v.seq && detect::IsPointToPointKind(v.kind)) out << "  " << Esc(v.op) << " #" << v.seq << " (numbered per peer)\n";
    else if (v.seq) out << "  collective #" << v.seq << ' ' << Esc(v.op) << '\n';
    else if (!v.op.empty()) out << "  op " << Esc(v.op) << '\n';
    out << "  culprits: " << FormatRanks(v.ranks) << (v.kind == detect::VerdictKind::kSyncStuck ? " (global)" : GlobalRanksNote(a))
        << '\n';
  }
  out << "  " << Esc(v.summary) << '\n';
  if (v.resolved) {
    out << "  resolved after " << format::FormatDuration(v.resolved_after_ns)
        << ": every rank that dumped saw the incident complete (slow, not hung)\n";
  }
  out << "  read " << a.dumps_read << " dumps from " << a.hosts.size() << " host" << (a.hosts.size() == 1 ? "" : "s");
  if (!a.hosts.empty()) {
    out << ":";
    for (size_t i = 0; i < a.hosts.size() && i < 8; ++i) out << ' ' << Esc(a.hosts[i]);
    if (a.hosts.size() > 8) out << " ...";
  }
  out << "; missing ranks: " << FormatRangeList(a.missing_ranks) << "\n\n";
}

// Thousands of ranks usually fall into a few states: one line per state.
void RankStates(const Analysis& a, std::ostringstream& out) {
  if (a.ranks.empty()) return;
  using Key = std::tuple<std::string, uint64_t, uint64_t, bool>;
  std::map<Key, std::vector<int>> groups;
  for (const auto& r : a.ranks) groups[{r.state, r.last_joined, r.last_completed, r.has_dump}].push_back(r.rank);
  out << "EVIDENCE: each rank's last joined and last completed collective\n";
  size_t lines = 0, rest_ranks = 0;
  for (const auto& [key, ranks] : groups) {
    if (lines++ >= kMaxStateLines) {
      rest_ranks += ranks.size();
      continue;
    }
    const auto& [state, joined, completed, has_dump] = key;
    out << "  " << FormatRanks(ranks) << ": ";
    if (has_dump) out << "joined #" << joined << ", completed #" << completed << ", ";
    out << Esc(state) << '\n';
  }
  if (lines > kMaxStateLines) {
    out << "  ... and " << lines - kMaxStateLines << " more states of " << rest_ranks << " ranks (see --json)\n";
  }
  out << '\n';
}

std::string Describe(const FingerprintCell& c) {
  if (!c.known) return "(no record)";
  std::string s = Esc(c.op) + "(count=" + std::to_string(c.count) + " dtype=" + std::to_string(c.datatype);
  if (c.redop >= 0) s += " redop=" + std::to_string(c.redop);
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

// "rank 1: waits in Recv #3 from rank 0 (count=4096 dtype=7)", "rank 0: has not posted Send #3 to rank 1".
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
    out << (r.complete ? "posted " : "waits in ") << op << " (count=" << r.count << " dtype=" << r.datatype << ")"
        << (r.complete ? ", complete" : "") << '\n';
  }
  out << '\n';
}

void Stacks(const Analysis& a, std::ostringstream& out) {
  if (a.stacks.empty() && a.culprits_without_stacks == 0) return;
  out << "EVIDENCE: culprit stacks (innermost user frames first)\n";
  for (const auto& g : a.stacks) {
    out << "  " << FormatRanks(g.ranks) << " (" << Esc(g.where) << (g.ranks.size() > 1 ? " and others with the same stacks" : "")
        << ")\n";
    if (g.threads.empty()) out << "    (no stacks captured)\n";
    for (const auto& t : g.threads) {
      out << "    " << Esc(t.title) << '\n';
      for (const auto& f : t.frames) out << "      " << Esc(f) << '\n';
      if (t.hidden_frames) out << "      (" << t.hidden_frames << " internal/libc frames hidden)\n";
    }
    if (!g.python_unavailable.empty()) out << "    python stacks unavailable: " << Esc(g.python_unavailable) << '\n';
  }
  if (a.culprits_without_stacks) out << "  " << a.culprits_without_stacks << " culprit(s) left no dump, so no stacks\n";
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

}  // namespace

std::string RenderTextReport(const Analysis& a) {
  std::ostringstream out;
  Verdict(a, out);
  RankStates(a, out);
  Fingerprints(a, out);
  P2POps(a, out);
  Stacks(a, out);
  Hints(a, out);
  Lines("NOTES", a.notes, out);
  Lines("UNUSABLE FILES", a.rejected, out);
  return out.str();
}

}  // namespace ncclwatch::analyze
