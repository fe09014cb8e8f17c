#include "core/analyze/analyzer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/analyze/classify.h"
#include "core/analyze/comm_table.h"
#include "core/analyze/evidence.h"
#include "core/analyze/hints.h"
#include "core/format/hex.h"
#include "core/format/rank_list.h"

namespace ncclwatch::analyze {
namespace {

using format::FormatHex;
using format::FormatRanks;

constexpr size_t kMaxStackGroups = 8;

bool MoreImportant(const MergedVerdict& a, const MergedVerdict& b) {
  int pa = KindPriority(a.kind), pb = KindPriority(b.kind);
  if (pa != pb) return pa < pb;
  return a.nranks > b.nranks;
}

// rank_exited and sync_stuck as the ranks' own detectors saw them, merged by (kind, comm).
std::vector<MergedVerdict> AdoptLocalVerdicts(const std::vector<const dump::RankDump*>& dumps,
                                              const std::vector<CommTable>& tables) {
  std::map<std::pair<std::string, uint64_t>, MergedVerdict> merged;
  for (const auto* d : dumps) {
    const auto& local = d->verdict;
    if (local.kind != "rank_exited" && local.kind != "sync_stuck") continue;
    MergedVerdict& v = merged[{local.kind, local.kind == "sync_stuck" ? 0 : local.comm_hash}];
    v.kind = local.kind;
    v.source = "local";
    if (local.kind == "sync_stuck") {
      v.ranks.push_back(d->process.global_rank);
      v.op = local.op;
      continue;
    }
    v.comm_hash = local.comm_hash;
    v.seq = std::max(v.seq, local.seq);
    if (v.op.empty()) v.op = local.op;
    v.ranks.insert(v.ranks.end(), local.culprit_ranks.begin(), local.culprit_ranks.end());
    v.other_ranks.insert(v.other_ranks.end(), local.other_ranks.begin(), local.other_ranks.end());
  }
  std::unordered_map<uint64_t, int> nranks_by_hash;
  for (const auto& t : tables) nranks_by_hash[t.comm_hash] = t.nranks;
  std::vector<MergedVerdict> out;
  for (auto& [key, v] : merged) {
    for (auto* list : {&v.ranks, &v.other_ranks}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    auto known = nranks_by_hash.find(v.comm_hash);
    if (known != nranks_by_hash.end()) v.nranks = known->second;
    v.summary = v.kind == "sync_stuck"
                    ? "global " + FormatRanks(v.ranks) + " blocked in a host CUDA sync with no collective pending"
                    : FormatRanks(v.ranks) + " exited while the others wait in #" + std::to_string(v.seq) + " " + v.op;
    out.push_back(std::move(v));
  }
  return out;
}

// Every communicator's verdict in summary detail (cheap: see RankDetail), and which one wins.
struct Candidates {
  std::vector<std::pair<const CommTable*, MergedVerdict>> by_table;
  std::vector<MergedVerdict> local;
  std::optional<MergedVerdict> best;  // in full detail
};

Candidates ChooseVerdict(const std::vector<const dump::RankDump*>& dumps, const std::vector<CommTable>& tables) {
  Candidates c;
  const MergedVerdict* best = nullptr;
  const CommTable* best_table = nullptr;
  for (const auto& table : tables) {
    if (auto v = ClassifyComm(table, RankDetail::kSummary)) c.by_table.emplace_back(&table, std::move(*v));
  }
  for (const auto& [table, v] : c.by_table) {
    if (!best || MoreImportant(v, *best)) best = &v, best_table = table;
  }
  c.local = AdoptLocalVerdicts(dumps, tables);
  for (const auto& v : c.local) {
    if (!best || MoreImportant(v, *best)) best = &v, best_table = nullptr;
  }
  // Only the winner is worth its full rank lists (O(nranks), up to 2^20).
  if (best_table) c.best = ClassifyComm(*best_table, RankDetail::kFull);
  else if (best) c.best = *best;
  return c;
}

// Culprit rank -> its dump (global ranks for sync_stuck).
std::vector<std::pair<int, const dump::RankDump*>> CulpritDumps(const MergedVerdict& v, const CommTable* table,
                                                                const std::vector<const dump::RankDump*>& dumps,
                                                                size_t* without) {
  std::unordered_map<int, const dump::RankDump*> by_global_rank;
  if (!table) {
    for (const auto* d : dumps) by_global_rank[d->process.global_rank] = d;  // the last one wins
  }
  std::vector<std::pair<int, const dump::RankDump*>> out;
  for (int rank : v.ranks) {
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

void AddNotes(const std::vector<CommTable>& tables, const Candidates& candidates, const CommTable* chosen,
              Analysis* a) {
  size_t dropped = 0;
  // Notes beyond the limit are counted, never formatted: a hostile set may have millions.
  auto add = [&](const auto& make_note) {
    if (a->notes.size() < kMaxNotes) a->notes.push_back(make_note());
    else ++dropped;
  };
  for (const auto& t : tables) {
    for (const auto& [rank, entry] : t.ranks) {
      if (entry.comm->async_error == 0) continue;
      add([&] {
        return "comm " + FormatHex(t.comm_hash) + " rank " + std::to_string(rank) + " reports async error " +
               std::to_string(entry.comm->async_error);
      });
    }
  }
  for (const auto& [table, v] : candidates.by_table) {
    if (table == chosen) continue;
    add([&] {
      return "also on comm " + FormatHex(table->comm_hash) + " (" + std::to_string(table->nranks) +
             " ranks): " + v.kind + ": " + v.summary;
    });
  }
  if (dropped) a->notes.push_back("... and " + std::to_string(dropped) + " more notes");
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
    a.notes.push_back(std::to_string(all.size() - dumps.size()) +
                      " older dumps of the same processes were ignored (only the latest incident counts)");
  }
  std::set<std::string> hosts;
  for (const auto* d : dumps) hosts.insert(d->process.host);
  a.hosts.assign(hosts.begin(), hosts.end());

  std::vector<CommTable> tables = BuildCommTables(dumps);
  Candidates candidates = ChooseVerdict(dumps, tables);
  std::optional<MergedVerdict>& verdict = candidates.best;
  if (!verdict) {
    a.verdict.source = "merged";
    a.verdict.summary = "no communicator is stuck: nothing in flight and every init finished";
    if (!tables.empty()) a.missing_ranks = tables.front().MissingRanks();
    return a;
  }
  a.verdict = std::move(*verdict);
  const CommTable* table = nullptr;
  for (const auto& t : tables) {
    if (a.verdict.comm_hash != 0 && t.comm_hash == a.verdict.comm_hash) table = &t;
  }
  if (table) {
    a.missing_ranks = table->MissingRanks();
    a.ranks = BuildRankRows(*table, a.verdict);
    if (a.verdict.kind == "mismatch") a.fingerprints = BuildFingerprints(*table, a.verdict.seq);
  }
  auto culprits = CulpritDumps(a.verdict, table, dumps, &a.culprits_without_stacks);
  a.stacks = BuildStackGroups(culprits, kMaxStackGroups);
  HintInput input{&a.verdict, culprits, dumps, &a.fingerprints};
  a.hints = BuildHints(input);
  AddNotes(tables, candidates, table, &a);
  return a;
}

}  // namespace ncclwatch::analyze
