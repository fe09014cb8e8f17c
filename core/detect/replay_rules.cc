// Rules about CUDA graph replays: "replay_straggler", "replay_hang", a rank_exited while its
// peers wait in a replay, and a mismatch at capture told by the graphs' keys. See comm_rules.h
// and core/detect/README.md ("CUDA graph replays").
#include <algorithm>
#include <map>
#include <set>

#include "core/detect/comm_rules.h"
#include "core/detect/evidence.h"
#include "core/detect/replay_state.h"

namespace ncclwatch::detect {
namespace {

// Every graph some member replayed, in member order then launch order.
std::vector<uint64_t> GraphsOfGroup(const CommGroup& group) {
  std::vector<uint64_t> graphs;
  for (const CommMember& member : group.members) {
    for (const uint64_t graph : GraphsOf(*member.comm)) {
      if (std::find(graphs.begin(), graphs.end(), graph) == graphs.end()) graphs.push_back(graph);
    }
  }
  return graphs;
}

// One graph of the communicator as every member stands in it.
struct GraphState {
  uint64_t graph = 0;
  std::vector<ReplayProgress> progress;  // aligned with group.members
  uint64_t replay = 0;                   // the oldest replay a live rank waits in; 0 none
  const ReplayFacts* record = nullptr;   // a record of it, for its label
};

GraphState StateOf(const CommGroup& group, uint64_t graph) {
  GraphState state;
  state.graph = graph;
  for (const CommMember& member : group.members) {
    state.progress.push_back(ProgressOf(*member.comm, graph));
    const ReplayFacts* pending = state.progress.back().pending;
    if (!member.alive() || pending == nullptr) continue;
    if (state.replay == 0 || pending->replay < state.replay) state.replay = pending->replay;
  }
  if (state.replay == 0) return state;
  for (const CommMember& member : group.members) {
    if (const ReplayFacts* r = FindReplay(*member.comm, graph, state.replay)) {
      state.record = r;
      break;
    }
  }
  return state;
}

// When member `i` launched the state's replay; nullopt when it did not, or its record is gone.
std::optional<uint64_t> LaunchedAt(const CommGroup& group, const GraphState& state, size_t i) {
  const ReplayFacts* r = FindReplay(*group.members[i].comm, state.graph, state.replay);
  if (r == nullptr || r->enqueue_ns == 0) return std::nullopt;
  return r->enqueue_ns;
}

// A verdict about replay `state.replay` of the state's graph: the evidence of every member,
// with how far each got in the graph's replays.
Verdict StartReplayVerdict(VerdictKind kind, const CommGroup& group, const GraphState& state) {
  Verdict verdict = StartVerdict(kind, group, 0);
  verdict.seq = state.replay;
  verdict.graph = state.graph;
  if (state.record != nullptr) {
    verdict.graph_label = GraphLabel(*state.record, group.comm_hash);
    verdict.framework_seq = state.record->framework_seq;
    for (const std::string& op : state.record->op_names) verdict.op += (verdict.op.empty() ? "" : ",") + op;
  }
  for (size_t i = 0; i < verdict.rank_evidence.size() && i < state.progress.size(); ++i) {
    verdict.rank_evidence[i].replays_launched = state.progress[i].launched;
    verdict.rank_evidence[i].replays_completed = state.progress[i].completed;
  }
  return verdict;
}

// Offline, ranks without a dump are not known to have launched anything: when every rank with
// a dump launched the replay and one still waits in it, they are the stragglers.
std::optional<Verdict> ReplayStragglerWithoutFacts(const RuleContext& context, const GraphState& state) {
  const CommGroup& group = context.group;
  Verdict verdict = StartReplayVerdict(VerdictKind::kReplayStraggler, group, state);
  for (size_t i = 0; i < group.members.size(); ++i) {
    if (state.progress[i].completed < state.replay) verdict.other_ranks.push_back(group.members[i].rank());
  }
  verdict.culprits_without_facts = group.NotVisibleRanges();
  verdict.summary = "replay_straggler on comm " + FormatHash(group.comm_hash) + ": " +
                    FormatRanksVerb(verdict.other_ranks, "waits", "wait") + " in " + ReplaySubject(verdict) + "; " +
                    FormatRanks(verdict.culprits_without_facts) +
                    (format::CountRanks(verdict.culprits_without_facts) == 1
                         ? " left no dump and is not known to have launched it"
                         : " left no dump and are not known to have launched it");
  return verdict;
}

std::optional<Verdict> StragglerOf(const RuleContext& context, const GraphState& state) {
  const CommGroup& group = context.group;
  std::vector<int> lagging, joined, unknown;
  std::optional<uint64_t> onset;
  for (size_t i = 0; i < group.members.size(); ++i) {
    const ReplayProgress& p = state.progress[i];
    const int rank = group.members[i].rank();
    if (p.launched >= state.replay) {
      joined.push_back(rank);
      const std::optional<uint64_t> at = LaunchedAt(group, state, i);
      if (at && (!onset || *at < *onset)) onset = at;
    } else {
      (p.known ? lagging : unknown).push_back(rank);
    }
  }
  if (lagging.empty()) {
    if (unknown.empty() && context.offline() && group.partial()) return ReplayStragglerWithoutFacts(context, state);
    return std::nullopt;
  }
  if (!context.Overdue(onset, context.stall_ns)) return std::nullopt;
  Verdict verdict = StartReplayVerdict(VerdictKind::kReplayStraggler, group, state);
  verdict.culprit_ranks = lagging;
  verdict.other_ranks = joined;
  verdict.since_ns = onset.value_or(0);
  verdict.summary = "replay_straggler on comm " + FormatHash(group.comm_hash) + ": " +
                    FormatRanksVerb(lagging, "has", "have") + " not launched " + ReplaySubject(verdict) + "; " +
                    FormatRanks(joined) + " launched it" +
                    (context.offline() ? "" : " " + FormatDuration(Age(context.now_ns, verdict.since_ns)) + " ago") +
                    (joined.size() == 1 ? " and waits" : " and wait");
  if (!unknown.empty()) {
    verdict.notes.push_back(FormatRanks(unknown) + ": no replay of this graph kept (older replays of other graphs "
                            "pushed them out); whether " + (unknown.size() == 1 ? "it" : "they") +
                            " launched it is unknown");
  }
  if (group.partial()) {
    verdict.notes.push_back(context.offline() ? "only ranks with a dump are judged; ranks without one may lag too"
                                              : "only visible ranks are judged; ranks on other hosts may lag too");
  }
  return verdict;
}

std::optional<Verdict> HangOf(const RuleContext& context, const GraphState& state) {
  const CommGroup& group = context.group;
  if (context.offline() && group.partial()) return std::nullopt;  // the stragglers are those without a dump
  std::optional<uint64_t> all_joined;
  for (size_t i = 0; i < group.members.size(); ++i) {
    if (state.progress[i].launched < state.replay) return std::nullopt;  // not everyone launched it
    const std::optional<uint64_t> at = LaunchedAt(group, state, i);
    if (at && (!all_joined || *at > *all_joined)) all_joined = at;
  }
  if (!context.Overdue(all_joined, context.stall_ns)) return std::nullopt;
  Verdict verdict = StartReplayVerdict(VerdictKind::kReplayHang, group, state);
  const bool waits_on_remote = group.partial() && !context.offline();
  for (size_t i = 0; i < group.members.size(); ++i) {
    const bool done = state.progress[i].completed >= state.replay;
    (done || waits_on_remote ? verdict.other_ranks : verdict.culprit_ranks).push_back(group.members[i].rank());
  }
  verdict.since_ns = all_joined.value_or(0);
  const std::string stuck =
      "replay_hang on comm " + FormatHash(group.comm_hash) + ": " + ReplaySubject(verdict) + " launched by " +
      (group.members.size() == 1 ? "the only " : "all ") +
      (context.offline() ? CountOf(group.members.size(), "rank", "ranks") + " with a dump"
                         : CountOf(group.members.size(), "visible rank", "visible ranks")) +
      " has not completed" + (context.offline() ? "" : " after " + FormatDuration(Age(context.now_ns, verdict.since_ns)));
  if (waits_on_remote) {
    verdict.culprits_without_facts = group.NotVisibleRanges();
    verdict.summary = stuck + "; " + FormatRanksVerb(verdict.other_ranks, "waits", "wait") + " on " +
                      FormatRanks(verdict.culprits_without_facts) + " on other hosts";
    verdict.notes.push_back("all visible ranks launched it; ranks on other hosts may not have, or the transport is "
                            "stuck");
  } else {
    verdict.summary = stuck + " on " + FormatRanks(verdict.culprit_ranks);
  }
  return verdict;
}

// The verdict of `check` over every graph of the group whose condition began first.
template <typename Check>
std::optional<Verdict> EarliestOverGraphs(const RuleContext& context, Check check) {
  std::optional<Verdict> best;
  for (const uint64_t graph : GraphsOfGroup(context.group)) {
    const GraphState state = StateOf(context.group, graph);
    if (state.replay == 0) continue;
    std::optional<Verdict> verdict = check(context, state);
    if (verdict && (!best || verdict->since_ns < best->since_ns)) best = std::move(verdict);
  }
  return best;
}

// Ranks of one graph key among the replays captured at one #N.
struct CaptureFaction {
  uint64_t graph = 0;
  std::vector<int> ranks;
  const ReplayFacts* record = nullptr;
  uint64_t first_launch_ns = 0;
};

}  // namespace

std::optional<Verdict> CheckReplayStraggler(const RuleContext& context) {
  return EarliestOverGraphs(context, StragglerOf);
}

std::optional<Verdict> CheckReplayHang(const RuleContext& context) { return EarliestOverGraphs(context, HangOf); }

std::optional<Verdict> CheckRankExitedInReplay(const RuleContext& context) {
  const CommGroup& group = context.group;
  const uint64_t grace = 2 * context.config.poll_interval_ns;
  return EarliestOverGraphs(context, [&](const RuleContext&, const GraphState& state) -> std::optional<Verdict> {
    std::vector<int> waiters, culprits;
    uint64_t since = 0;
    for (size_t i = 0; i < group.members.size(); ++i) {
      const CommMember& member = group.members[i];
      const ReplayProgress& p = state.progress[i];
      if (!member.alive()) {
        if (p.completed < state.replay) culprits.push_back(member.rank());
        continue;
      }
      if (p.pending == nullptr || p.pending->replay != state.replay) continue;
      if (!context.offline() && Age(context.now_ns, p.pending->enqueue_ns) < grace) continue;
      waiters.push_back(member.rank());
      if (since == 0 || (p.pending->enqueue_ns != 0 && p.pending->enqueue_ns < since)) since = p.pending->enqueue_ns;
    }
    if (waiters.empty() || culprits.empty()) return std::nullopt;
    Verdict verdict = StartReplayVerdict(VerdictKind::kRankExited, group, state);
    verdict.culprit_ranks = culprits;
    verdict.other_ranks = waiters;
    verdict.since_ns = since;
    verdict.summary = "rank_exited on comm " + FormatHash(group.comm_hash) + ": " + FormatRanks(culprits) +
                      " left while " + FormatRanksVerb(waiters, "waits", "wait") + " in " + ReplaySubject(verdict);
    return verdict;
  });
}

std::optional<Verdict> CheckCaptureMismatch(const RuleContext& context) {
  const CommGroup& group = context.group;
  // #N of a graph's first collective -> the keys the ranks' graphs captured there have.
  std::map<uint64_t, std::vector<CaptureFaction>> by_seq;
  for (const CommMember& member : group.members) {
    std::set<std::pair<uint64_t, uint64_t>> seen;  // (first_seq, graph) of this rank
    for (const ReplayFacts& r : member.comm->replays) {
      if (r.first_seq == 0 || !seen.insert({r.first_seq, r.graph}).second) continue;
      std::vector<CaptureFaction>& factions = by_seq[r.first_seq];
      auto it = std::find_if(factions.begin(), factions.end(), [&](const CaptureFaction& f) { return f.graph == r.graph; });
      if (it == factions.end()) it = factions.insert(factions.end(), CaptureFaction{r.graph, {}, &r, r.enqueue_ns});
      it->ranks.push_back(member.rank());
      if (r.enqueue_ns != 0 && (it->first_launch_ns == 0 || r.enqueue_ns < it->first_launch_ns)) {
        it->first_launch_ns = r.enqueue_ns;
      }
    }
  }
  for (auto& [seq, factions] : by_seq) {
    if (factions.size() < 2) continue;
    for (CaptureFaction& f : factions) std::sort(f.ranks.begin(), f.ranks.end());
    std::stable_sort(factions.begin(), factions.end(), [](const CaptureFaction& a, const CaptureFaction& b) {
      return a.ranks.size() > b.ranks.size() || (a.ranks.size() == b.ranks.size() && a.ranks[0] < b.ranks[0]);
    });
    const bool clear_majority = factions[0].ranks.size() > factions[1].ranks.size();
    Verdict verdict = StartVerdict(VerdictKind::kMismatch, group, seq);
    std::string text;
    for (size_t i = 0; i < factions.size(); ++i) {
      const CaptureFaction& f = factions[i];
      auto& target = i > 0 || !clear_majority ? verdict.culprit_ranks : verdict.other_ranks;
      target.insert(target.end(), f.ranks.begin(), f.ranks.end());
      text += (text.empty() ? "" : " vs ") + FormatRanks(f.ranks) + " " + GraphLabel(*f.record, group.comm_hash) +
              " (key " + FormatHash(f.graph) + ")";
      if (f.first_launch_ns != 0 && (verdict.since_ns == 0 || f.first_launch_ns < verdict.since_ns)) {
        verdict.since_ns = f.first_launch_ns;
      }
    }
    std::sort(verdict.culprit_ranks.begin(), verdict.culprit_ranks.end());
    const CaptureFaction& reference = clear_majority ? factions[1] : factions[0];
    verdict.graph = reference.graph;
    verdict.graph_label = GraphLabel(*reference.record, group.comm_hash);
    if (verdict.op.empty()) {
      for (const std::string& op : reference.record->op_names) verdict.op += (verdict.op.empty() ? "" : ",") + op;
    }
    verdict.summary = "mismatch at capture on comm " + FormatHash(group.comm_hash) + ": the CUDA graphs captured from #" +
                      std::to_string(seq) + " differ: " + text;
    verdict.notes.push_back("every replay of these graphs runs different collectives on different ranks");
    if (!clear_majority) verdict.notes.push_back("no majority: every rank is named");
    return verdict;
  }
  return std::nullopt;
}

}  // namespace ncclwatch::detect
