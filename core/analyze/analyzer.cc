#include "core/analyze/analyzer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/analyze/after_events.h"
#include "core/analyze/attempt_snapshot.h"
#include "core/analyze/comm_table.h"
#include "core/analyze/culprit_processes.h"
#include "core/analyze/evidence.h"
#include "core/analyze/facts_from_dumps.h"
#include "core/analyze/hints.h"
#include "core/analyze/resolution.h"
#include "core/analyze/runs.h"
#include "core/detect/detector.h"
#include "core/format/comm_label.h"
#include "core/format/duration.h"
#include "core/format/nccl_names.h"
#include "core/format/plural.h"
#include "core/format/rank_list.h"

namespace ncclwatch::analyze {
namespace {

constexpr size_t kMaxStackGroups = 8;
// A job of thousands of ranks must not drown the verdict in notes.
constexpr size_t kMaxNotes = 12;
// An attempt's one line names at most this many culprit processes.
constexpr size_t kProcessesPerAttemptLine = 3;

// Culprit rank -> its dump (global ranks for sync_stuck); the culprits without one in *without.
std::vector<std::pair<int, const dump::RankDump*>> CulpritDumps(const std::vector<int>& culprit_ranks, const CommTable* table,
                                                                const std::vector<const dump::RankDump*>& dumps,
                                                                std::vector<int>* without) {
  std::unordered_map<int, const dump::RankDump*> by_global_rank;
  if (!table) {
    for (const auto* d : dumps) by_global_rank[d->process.global_rank] = d;  // the last one wins
  }
  std::vector<std::pair<int, const dump::RankDump*>> out;
  for (int rank : culprit_ranks) {
    const dump::RankDump* found = nullptr;
    if (table) {
      auto it = table->ranks.find(rank);
      if (it != table->ranks.end()) found = it->second.dump;
    } else {
      auto it = by_global_rank.find(rank);
      if (it != by_global_rank.end()) found = it->second;
    }
    if (found) {
      out.emplace_back(rank, found);
    } else {
      without->push_back(rank);
    }
  }
  return out;
}

void AddNotes(const std::vector<CommTable>& tables, const std::vector<detect::Verdict>& verdicts, Analysis* a) {
  size_t dropped = 0;
  // Notes beyond the limit are counted, never formatted: a hostile set may have millions.
  auto add = [&](const auto& make_note) {
    if (a->notes.size() < kMaxNotes) a->notes.push_back(make_note());
    else ++dropped;
  };
  for (const auto& t : tables) {
    for (const auto& ranked : t.ranks) {
      // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
      const int rank = ranked.first;
      const int async_error = ranked.second.comm->async_error;
      if (async_error == 0) continue;
      add([&] {
        return "comm " + format::CommLabel(t.comm_hash, t.comm_name) + " rank " + std::to_string(rank) + " reports async error " +
               format::NcclResultName(async_error);
      });
    }
  }
  for (const std::string& note : verdicts.front().notes) add([&] { return note; });
  for (size_t i = 1; i < verdicts.size(); ++i) {
    const detect::Verdict& v = verdicts[i];
    add([&] {
      return (v.comm_hash != 0 ? "also on comm " + format::CommLabel(v.comm_hash, v.comm_name) + " (" + std::to_string(v.nranks) + " ranks): "
                               : std::string("also: ")) +
             detect::ToString(v.kind) + ": " + v.summary;
    });
  }
  if (dropped) a->notes.push_back("... and " + format::CountOf(dropped, "more note", "more notes"));
}

// Processes of earlier attempts that held a communicator a process of this attempt holds: the
// proof of a stale unique id (an id an earlier attempt used, core/detect/stale_id_rule.h). They
// are gone by now (a restart stops every process of the attempt before it), and only the shared
// communicators come along: the earlier attempt's own incident is not this one's.
std::vector<dump::RankDump> History(const AttemptSnapshot& snapshot, const std::vector<const dump::RankDump*>& earlier) {
  std::set<uint64_t> held;
  for (const JudgedDump& j : snapshot.judged) {
    for (const detect::CommFacts& c : j.loaded->dump.comms) held.insert(c.comm_hash);
  }
  std::vector<dump::RankDump> out;
  for (const dump::RankDump* d : earlier) {
    dump::RankDump copy;
    for (const detect::CommFacts& c : d->comms) {
      if (c.comm_hash != 0 && held.count(c.comm_hash) != 0) copy.comms.push_back(c);
    }
    if (copy.comms.empty()) continue;
    copy.incident = d->incident;
    copy.process = d->process;
    copy.process.alive = false;
    out.push_back(std::move(copy));
  }
  return out;
}

bool TransportKind(detect::VerdictKind kind) {
  using detect::VerdictKind;
  return kind == VerdictKind::kCollectiveHang || kind == VerdictKind::kP2PHang || kind == VerdictKind::kMismatch ||
         kind == VerdictKind::kP2PMismatch || kind == VerdictKind::kStaleUniqueId;
}

// The one next step: about the first culprit process, unless the cause is not in one process
// (a transport, calls that disagree, a stale id) or its stacks are all there is: then the first hint.
std::string NextStep(const Analysis& a) {
  const std::string hint = a.hints.empty() ? "" : "what to try: [" + a.hints.front().id + "] below";
  if (a.culprit_processes.empty()) return hint;
  const CulpritProcess& first = a.culprit_processes.front();
  if (TransportKind(a.verdict.kind) && first.state == ProcessState::kDumped) return hint;
  return first.next.empty() ? hint : first.next;
}

Outcome OutcomeOf(const Analysis& a) {
  if (a.verdict.kind == detect::VerdictKind::kNone) return Outcome::kNoHang;
  return a.resolution.resolved ? Outcome::kResolvedHang : Outcome::kHang;
}

Outcome Worse(Outcome a, Outcome b) {
  if (a == Outcome::kHang || b == Outcome::kHang) return Outcome::kHang;
  if (a == Outcome::kResolvedHang || b == Outcome::kResolvedHang) return Outcome::kResolvedHang;
  return Outcome::kNoHang;
}

// "attempt 0: rank_exited: rank 1 (vm:812) at #6 AllReduce, exited with status 1".
std::string AttemptLineText(const Analysis& a) {
  std::string label = AttemptLabel(a.attempt);
  if (label.empty()) label = "attempt ?";
  const detect::Verdict& v = a.verdict;
  if (v.kind == detect::VerdictKind::kNone) return label + ": no incident (" + format::CountOf(a.dumps_read, "dump", "dumps") + ")";
  std::string line = label + ": " + detect::ToString(v.kind) + ":";
  for (size_t i = 0; i < a.culprit_processes.size() && i < kProcessesPerAttemptLine; ++i) {
    line += (i ? ", " : " ") + ProcessLabel(a.culprit_processes[i]);
  }
  if (a.culprit_processes.size() > kProcessesPerAttemptLine) line += " and others";
  if (v.seq != 0) line += " at #" + std::to_string(v.seq) + " " + v.op;
  if (!a.culprit_processes.empty() && a.culprit_processes.front().state == ProcessState::kGone) {
    line += ", " + ExitText(a.culprit_processes.front().exit);
  }
  if (a.resolution.resolved) line += ", resolved after " + format::FormatDuration(a.resolution.resolved_after_ns);
  return line;
}

Analysis AnalyzeAttempt(const AttemptDumps& attempt, const AttemptSnapshot& snapshot,
                        const std::vector<dump::RankDump>& history, const ResolutionIndex& resolutions) {
  Analysis a;
  a.attempt = attempt.attempt;
  std::vector<const dump::RankDump*> dumps;
  std::vector<bool> as_at_abort;
  // History first: a rank of this attempt with the same communicator rank wins the table's row.
  for (const dump::RankDump& h : history) {
    dumps.push_back(&h);
    as_at_abort.push_back(false);
  }
  const size_t first_judged = dumps.size();
  std::vector<const dump::LoadedDump*> judged;
  std::set<std::string> hosts;
  for (const JudgedDump& j : snapshot.judged) {
    dumps.push_back(&j.loaded->dump);
    as_at_abort.push_back(j.teardown);
    judged.push_back(j.loaded);
    hosts.insert(j.loaded->dump.process.host);
  }
  a.dumps_read = judged.size();
  a.dumps_after = snapshot.after.size();
  a.hosts.assign(hosts.begin(), hosts.end());
  for (const dump::LoadedDump* d : snapshot.before) {
    if (a.notes.size() >= kMaxNotes) break;
    a.notes.push_back("before it: " + WhoOf(d->dump) + " dumped incident " + d->dump.incident.id + ", which resolved after " +
                      format::FormatDuration(resolutions.ResolvedAfter(*d).value_or(0)));
  }

  // The one classifier, over the facts of every judged dump (Scope::kJob: no thresholds, no
  // clocks); its first verdict is the most important one (detector.h). The evidence reads
  // the same facts (completion included) through the tables.
  const detect::JobFacts facts = FactsFromDumps(dumps, as_at_abort);
  std::vector<const detect::ProcessFacts*> judged_facts;
  for (size_t i = first_judged; i < facts.processes.size(); ++i) judged_facts.push_back(&facts.processes[i]);
  a.then = WhatHappenedNext(snapshot, judged_facts);
  std::vector<CommTable> tables = BuildCommTables(dumps, facts);
  const std::vector<detect::Verdict> verdicts = detect::Classify(facts, detect::DetectConfig{}, 0);
  if (verdicts.empty()) {
    a.verdict.summary = "no communicator is stuck: nothing in flight and every init finished";
    if (!tables.empty()) a.missing_ranks = tables.front().MissingRanks();
    return a;
  }
  a.verdict = verdicts.front();
  for (const detect::P2PEvidence& e : verdicts.front().p2p) {
    a.p2p.push_back(P2PRow{e.rank, e.op, e.peer, e.seq, e.posted, e.complete, e.count, e.datatype});
  }
  const CommTable* table = nullptr;
  for (const auto& t : tables) {
    if (a.verdict.comm_hash != 0 && t.comm_hash == a.verdict.comm_hash) table = &t;
  }
  if (table) {
    a.missing_ranks = table->MissingRanks();
    // A P2P verdict's number counts per peer: the rows show each rank's collectives as they stand.
    a.ranks = BuildRankRows(*table, detect::IsPointToPointKind(a.verdict.kind) ? 0 : a.verdict.seq,
                            detect::ReplayGraphOf(a.verdict));
    if (a.verdict.kind == detect::VerdictKind::kMismatch) a.fingerprints = BuildFingerprints(*table, a.verdict.seq);
  }
  std::vector<int> without;
  auto culprits = CulpritDumps(detect::AllCulpritRanks(a.verdict), table, dumps, &without);
  a.culprits_without_stacks = without.size();
  a.stacks = BuildStackGroups(culprits, kMaxStackGroups);
  HintInput input{&a.verdict, table, culprits, dumps, &a.fingerprints};
  a.hints = BuildHints(input);
  a.culprit_processes = DescribeCulprits(culprits, without, table, a.then);
  ResolutionSummary resolution = SummarizeResolutions(resolutions, judged);
  a.resolution = VerdictResolution{resolution.all_resolved, resolution.resolved_after_ns};
  for (std::string& note : resolution.notes) a.notes.push_back(std::move(note));
  a.next_step = NextStep(a);
  AddNotes(tables, verdicts, &a);
  return a;
}

// A run's attempts, each judged by its first incident; the analysis of the latest attempt
// that has a verdict (else the latest), with one line for each other attempt.
JudgedRun AnalyzeRun(const RunDumps& run, const ResolutionIndex& resolutions) {
  std::vector<Analysis> attempts;
  std::vector<std::vector<const dump::RankDump*>> judged;
  std::vector<const dump::RankDump*> earlier;  // judged dumps of the attempts so far
  Outcome outcome = Outcome::kNoHang;
  size_t dumps = 0;
  for (const AttemptDumps& attempt : run.attempts) {
    const AttemptSnapshot snapshot = SelectSnapshot(attempt, resolutions);
    attempts.push_back(AnalyzeAttempt(attempt, snapshot, History(snapshot, earlier), resolutions));
    outcome = Worse(outcome, OutcomeOf(attempts.back()));
    dumps += attempt.dumps.size();
    judged.emplace_back();
    for (const JudgedDump& j : snapshot.judged) judged.back().push_back(&j.loaded->dump);
    earlier.insert(earlier.end(), judged.back().begin(), judged.back().end());
  }
  size_t headline = attempts.size() - 1;
  for (size_t i = attempts.size(); i-- > 0;) {
    if (attempts[i].verdict.kind != detect::VerdictKind::kNone) {
      headline = i;
      break;
    }
  }
  Analysis a = std::move(attempts[headline]);
  for (size_t i = 0; i < attempts.size(); ++i) {
    if (i == headline) continue;
    const Analysis& other = attempts[i];
    a.other_attempts.push_back(AttemptLine{other.attempt, other.verdict.kind, detect::AllCulpritRanks(other.verdict),
                                           other.resolution.resolved, other.dumps_read, AttemptLineText(other)});
  }
  a.run = RunInfo{run.hosts, run.job_ids, run.attempts.size(), dumps, run.first_unix_ns, run.last_unix_ns};
  a.outcome = outcome;
  return JudgedRun{std::move(a), std::move(judged[headline])};
}

}  // namespace

Outcome OverallOutcome(const Analysis& a) {
  Outcome outcome = a.outcome;
  for (const Analysis& other : a.other_runs) outcome = Worse(outcome, OverallOutcome(other));
  return outcome;
}

std::vector<JudgedRun> AnalyzeRuns(const dump::DumpSet& set) {
  const ResolutionIndex resolutions(set);
  std::vector<JudgedRun> out;
  for (const RunDumps& run : GroupRuns(set)) out.push_back(AnalyzeRun(run, resolutions));
  return out;
}

Analysis Analyze(const dump::DumpSet& set) {
  std::vector<JudgedRun> runs = AnalyzeRuns(set);
  Analysis head;
  if (runs.empty()) {
    head.verdict.summary = "no communicator is stuck: nothing in flight and every init finished";
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i == 0) head = std::move(runs[i].analysis);
    else head.other_runs.push_back(std::move(runs[i].analysis));
  }
  for (const auto& r : set.rejected) head.rejected.push_back(r.error);
  return head;
}

}  // namespace ncclwatch::analyze
