// Aligns every rank's view of each communicator by commHash and rank, across hosts.
// Monotonic times of different hosts are never compared here: only collective numbers.
#ifndef NCCLWATCH_CORE_ANALYZE_COMM_TABLE_H_
#define NCCLWATCH_CORE_ANALYZE_COMM_TABLE_H_

#include <cstdint>
#include <map>
#include <vector>

#include "core/dump/dump.h"

namespace ncclwatch::analyze {

struct RankEntry {
  const dump::RankDump* dump = nullptr;
  const dump::CommState* comm = nullptr;
};

struct CommTable {
  uint64_t comm_hash = 0;
  int nranks = 0;
  std::map<int, RankEntry> ranks;  // by communicator rank; ranks without a dump are absent

  std::vector<int> MissingRanks() const;
  // The record of collective `seq` on `rank`, or nullptr when it fell out of the window.
  const dump::CollectiveRecord* Record(int rank, uint64_t seq) const;
};

// When one process wrote dumps for several incidents, only its latest (by wall clock of
// its own host) is kept: the analysis is about the current state of the job.
std::vector<const dump::RankDump*> LatestPerProcess(const std::vector<const dump::RankDump*>& dumps);

// One table per communicator hash, sorted by descending nranks then hash.
std::vector<CommTable> BuildCommTables(const std::vector<const dump::RankDump*>& dumps);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_COMM_TABLE_H_
