#include "core/analyze/analyzer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/analyze/facts_from_dumps.h"
#include "core/detect/detector.h"
#include "core/analyze/comm_table.h"
#include "core/analyze/evidence.h"
#include "core/analyze/hints.h"
#include "core/format/comm_label.h"
#include "core/format/hex.h"
#include "core/format/nccl_names.h"
#include "core/format/plural.h"
#include "core/format/rank_list.h"

namespace ncclwatch::analyze {
namespace {

using format::FormatHex;
using format::FormatRanks;

constexpr size_t kMaxStackGroups = 8;

// Culprit rank -> its dump (global ranks for sync_stuck).
std::vector<std::pair<int, const dump::RankDump*>> CulpritDumps(const std::vector<int>& culprit_ranks, const CommTable* table,
                                                                const std::vector<const dump::RankDump*>& dumps,
                                                                size_t* without) {
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
      ++*without;
    }
  }
  return out;
}

// A job of thousands of ranks must not drown the verdict in notes.
constexpr size_t kMaxNotes = 12;

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

}  // namespace

Analysis Analyze(const dump::DumpSet& set) {
  Analysis a;
  for (const auto& r : set.rejected) a.rejected.push_back(r.error);
  std::vector<const dump::RankDump*> all;
  for (const auto& loaded : set.dumps) all.push_back(&loaded.dump);
  std::vector<const dump::RankDump*> dumps = LatestPerProcess(all);
  a.dumps_read = dumps.size();
  if (all.size() > dumps.size()) {
    const size_t older = all.size() - dumps.size();
    a.notes.push_back(format::CountOf(older, "older dump", "older dumps") +
                      (older == 1 ? " of the same process was" : " of the same processes were") +
                      " ignored (only the latest incident counts)");
  }
  std::set<std::string> hosts;
  for (const auto* d : dumps) hosts.insert(d->process.host);
  a.hosts.assign(hosts.begin(), hosts.end());

  // The one classifier, over the facts of every dump (Scope::kJob: no thresholds, no
  // clocks); its first verdict is the most important one (detector.h). The evidence reads
  // the same facts (completion included) through the tables.
  const detect::JobFacts facts = FactsFromDumps(dumps);
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
    a.ranks = BuildRankRows(*table, detect::IsPointToPointKind(a.verdict.kind) ? 0 : a.verdict.seq, a.verdict.graph);
    if (a.verdict.kind == detect::VerdictKind::kMismatch) a.fingerprints = BuildFingerprints(*table, a.verdict.seq);
  }
  auto culprits = CulpritDumps(detect::AllCulpritRanks(a.verdict), table, dumps, &a.culprits_without_stacks);
  a.stacks = BuildStackGroups(culprits, kMaxStackGroups);
  HintInput input{&a.verdict, table, culprits, dumps, &a.fingerprints};
  a.hints = BuildHints(input);
  AddNotes(tables, verdicts, &a);
  return a;
}

}  // namespace ncclwatch::analyze
