#include "core/analyze/comm_table.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>


namespace ncclwatch::analyze {

// The reader guarantees 0 <= rank < nranks for each dump, and a table's nranks is the largest
// any dump claims, so every key of `ranks` lies in [0, nranks).
std::vector<format::RankRange> CommTable::MissingRanges() const {
  std::vector<format::RankRange> missing;
  int next = 0;  // lowest rank not yet accounted for
  for (const auto& [rank, entry] : ranks) {
    if (rank > next) missing.push_back(format::RankRange{next, rank - 1});
    next = rank + 1;
  }
  if (next < nranks) missing.push_back(format::RankRange{next, nranks - 1});
  return missing;
}

std::vector<int> CommTable::MissingRanks() const {
  std::vector<int> missing;
  for (const auto& range : MissingRanges()) {
    for (int r = range.first;; ++r) {  // no r <= last: last may be INT_MAX
      missing.push_back(r);
      if (r == range.last) break;
    }
  }
  return missing;
}

const detect::RecordFacts* CommTable::Record(int rank, uint64_t seq) const {
  auto it = ranks.find(rank);
  if (it == ranks.end()) return nullptr;
  for (const auto& record : it->second.comm->records) {
    if (record.seq == seq) return &record;
  }
  return nullptr;
}

std::vector<CommTable> BuildCommTables(const std::vector<const dump::RankDump*>& dumps, const detect::JobFacts& facts) {
  std::unordered_map<uint64_t, CommTable> by_hash;
  for (size_t i = 0; i < dumps.size() && i < facts.processes.size(); ++i) {
    for (const detect::CommFacts& comm : facts.processes[i].comms) {
      CommTable& table = by_hash[comm.comm_hash];
      table.comm_hash = comm.comm_hash;
      if (table.comm_name.empty()) table.comm_name = comm.name;
      table.nranks = std::max(table.nranks, comm.nranks);
      table.ranks[comm.rank] = RankEntry{dumps[i], &comm};
    }
  }
  std::vector<CommTable> tables;
  tables.reserve(by_hash.size());
  for (auto& [hash, table] : by_hash) tables.push_back(std::move(table));
  std::sort(tables.begin(), tables.end(), [](const CommTable& a, const CommTable& b) {
    return a.nranks != b.nranks ? a.nranks > b.nranks : a.comm_hash < b.comm_hash;
  });
  return tables;
}

}  // namespace ncclwatch::analyze
