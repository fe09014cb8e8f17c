#include "core/analyze/classify.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_set>

#include "core/format/rank_list.h"

namespace ncclwatch::analyze {
namespace {

using format::FormatRanks;
using Fingerprint = std::tuple<std::string, uint64_t, int, int, int>;

Fingerprint FingerprintOf(const dump::CollectiveRecord& r) {
  return {r.op, r.count, r.datatype, r.redop, r.root};
}

MergedVerdict Start(const CommTable& table, const std::string& kind) {
  MergedVerdict v;
  v.kind = kind;
  v.comm_hash = table.comm_hash;
  v.nranks = table.nranks;
  v.source = "merged";
  return v;
}

std::string OpAt(const CommTable& table, uint64_t seq) {
  for (const auto& [rank, entry] : table.ranks) {
    if (const auto* r = table.Record(rank, seq)) return r->op;
  }
  return "?";
}

// The ranks without a dump: expanded only for a full verdict.
std::vector<int> MissingRankList(const CommTable& table, RankDetail detail) {
  return detail == RankDetail::kFull ? table.MissingRanks() : std::vector<int>{};
}

std::optional<MergedVerdict> InitHang(const CommTable& table, RankDetail detail) {
  std::vector<int> stuck, done;
  for (const auto& [rank, entry] : table.ranks) {
    (entry.comm->init_done_ns == 0 ? stuck : done).push_back(rank);
  }
  if (stuck.empty()) return std::nullopt;
  MergedVerdict v = Start(table, "init_hang");
  v.op = "init";
  const bool any_missing = table.HasMissingRanks();
  // Init is collective: ranks that never arrived keep the others waiting.
  v.ranks = any_missing ? MissingRankList(table, detail) : stuck;
  v.other_ranks = any_missing ? stuck : done;
  v.summary = "init of communicator never finished on " + FormatRanks(stuck) +
              (any_missing ? "; no dump from " + FormatRanks(table.MissingRanges()) : "");
  return v;
}

std::optional<MergedVerdict> Mismatch(const CommTable& table) {
  // Collective number -> fingerprint -> ranks. Only numbers seen by two or more ranks count.
  // A rank's first record of a number is its record (as CommTable::Record has it): a
  // hostile dump repeating one number a million times must not list its rank a million times.
  std::map<uint64_t, std::map<Fingerprint, std::vector<int>>> by_seq;
  for (const auto& [rank, entry] : table.ranks) {
    std::unordered_set<uint64_t> seen;
    for (const auto& r : entry.comm->records) {
      if (seen.insert(r.seq).second) by_seq[r.seq][FingerprintOf(r)].push_back(rank);
    }
  }
  for (const auto& [seq, groups] : by_seq) {
    if (groups.size() < 2) continue;
    bool p2p = std::any_of(groups.begin(), groups.end(),
                           [](const auto& g) { return IsPointToPoint(std::get<0>(g.first)); });
    if (p2p) continue;
    // As the live detector (core/detect/mismatch_rule.cpp): without a unique largest group
    // (2 ranks, ties) every rank is named, and the group of the lowest rank is the reference.
    const std::vector<int>* majority = nullptr;
    size_t largest_groups = 0;
    for (const auto& [fp, ranks] : groups) {
      if (!majority || ranks.size() > majority->size()) largest_groups = 0;
      if (!majority || ranks.size() >= majority->size()) ++largest_groups;
      if (!majority || ranks.size() > majority->size() ||
          (ranks.size() == majority->size() && ranks.front() < majority->front())) {
        majority = &ranks;
      }
    }
    const bool unique_largest = largest_groups == 1;
    MergedVerdict v = Start(table, "mismatch");
    v.seq = seq;
    std::string majority_op;
    for (const auto& [fp, ranks] : groups) {
      if (&ranks == majority) {
        majority_op = std::get<0>(fp);
        if (!unique_largest) v.ranks.insert(v.ranks.end(), ranks.begin(), ranks.end());
        else v.other_ranks = ranks;
      } else {
        v.ranks.insert(v.ranks.end(), ranks.begin(), ranks.end());
      }
    }
    std::sort(v.ranks.begin(), v.ranks.end());
    v.op = table.Record(v.ranks.front(), seq)->op;
    v.summary = "at #" + std::to_string(seq) + " " + FormatRanks(v.ranks) + " issued " + v.op + " while " +
                FormatRanks(v.other_ranks) + " issued " + majority_op;
    if (v.op == majority_op) v.summary += " with different arguments";
    if (!unique_largest) v.summary = "at #" + std::to_string(seq) + " ranks disagree with no majority: every rank is named";
    return v;
  }
  return std::nullopt;
}

std::optional<MergedVerdict> InFlight(const CommTable& table, RankDetail detail) {
  uint64_t stuck_seq = 0;
  for (const auto& [rank, entry] : table.ranks) {
    const auto& c = *entry.comm;
    if (c.last_enqueued_seq > entry.last_completed) {
      uint64_t first_open = entry.last_completed + 1;
      if (stuck_seq == 0 || first_open < stuck_seq) stuck_seq = first_open;
    }
  }
  if (stuck_seq == 0) return std::nullopt;
  std::vector<int> not_joined, waiting, completed;
  for (const auto& [rank, entry] : table.ranks) {
    const auto& c = *entry.comm;
    if (c.last_enqueued_seq < stuck_seq) {
      not_joined.push_back(rank);
    } else if (entry.last_completed < stuck_seq) {
      waiting.push_back(rank);
    } else {
      completed.push_back(rank);
    }
  }
  const bool any_missing = table.HasMissingRanks();
  std::string where = "#" + std::to_string(stuck_seq) + " " + OpAt(table, stuck_seq);
  MergedVerdict v = Start(table, not_joined.empty() && !any_missing ? "collective_hang" : "straggler");
  v.seq = stuck_seq;
  v.op = OpAt(table, stuck_seq);
  v.other_ranks = waiting;
  if (!not_joined.empty()) {
    v.ranks = not_joined;
    v.summary = FormatRanks(not_joined) + " never joined " + where + ", which " + FormatRanks(waiting) +
                " wait in";
  } else if (any_missing) {
    v.ranks = MissingRankList(table, detail);
    v.summary = FormatRanks(waiting) + " wait in " + where + "; " + FormatRanks(table.MissingRanges()) +
                " left no dump and are not known to have joined it";
  } else {
    v.ranks = waiting;
    v.other_ranks = completed;
    v.summary = completed.empty()
                    ? "all " + std::to_string(table.nranks) + " ranks joined " + where + " and none completed it"
                    : "all ranks joined " + where + "; it never completed on " + FormatRanks(waiting);
  }
  return v;
}

}  // namespace

int KindPriority(const std::string& kind) {
  static const char* const kOrder[] = {"mismatch",        "rank_exited", "init_hang", "straggler",
                                       "collective_hang", "sync_stuck",  "none"};
  for (int i = 0; i < 7; ++i) {
    if (kind == kOrder[i]) return i;
  }
  return 7;
}

bool IsPointToPoint(const std::string& op) {
  return op == "Send" || op == "Recv" || op == "PutSignal" || op == "Signal" || op == "WaitSignal";
}

std::optional<MergedVerdict> ClassifyComm(const CommTable& table, RankDetail detail) {
  // The detector's order: mismatch > init_hang > straggler/collective_hang.
  if (auto v = Mismatch(table)) return v;
  if (auto v = InitHang(table, detail)) return v;
  return InFlight(table, detail);
}

}  // namespace ncclwatch::analyze
