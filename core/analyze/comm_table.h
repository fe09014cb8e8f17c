// Aligns every rank's facts of each communicator by commHash and rank, across hosts, for the
// evidence sections of a report (rank rows, fingerprints, stacks, hints). It judges nothing:
// the verdict comes from the one classifier over the same facts (facts_from_dumps.h), and
// completion is read from them, never derived again. Monotonic times of different hosts are
// never compared here: only collective numbers.
#ifndef NCCLWATCH_CORE_ANALYZE_COMM_TABLE_H_
#define NCCLWATCH_CORE_ANALYZE_COMM_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/detect/facts.h"
#include "core/dump/dump.h"
#include "core/format/rank_list.h"

namespace ncclwatch::analyze {

struct RankEntry {
  const dump::RankDump* dump = nullptr;
  // This rank's communicator as the classifier judged it (FactsFromDumps): collectives in
  // ascending #N, last_completed_seq the effective completion.
  const detect::CommFacts* comm = nullptr;
};

struct CommTable {
  uint64_t comm_hash = 0;
  std::string comm_name;  // the first name a rank's dump gives; empty when none
  int nranks = 0;
  std::map<int, RankEntry> ranks;  // by communicator rank; ranks without a dump are absent

  // Ranks in [0, nranks) without a dump. O(nranks): a dump may claim 2^20 ranks, so call it
  // for one table, not for every table of a hostile set.
  std::vector<int> MissingRanks() const;
  // The same as runs of consecutive ranks, in O(ranks with a dump): cheap for any table.
  std::vector<format::RankRange> MissingRanges() const;
  bool HasMissingRanks() const { return ranks.size() < static_cast<size_t>(nranks); }
  // The record of collective `seq` on `rank`, or nullptr when it fell out of the window.
  const detect::RecordFacts* Record(int rank, uint64_t seq) const;
};

// One table per communicator hash, sorted by descending nranks then hash. `facts` is
// FactsFromDumps(dumps) (facts.processes[i] from dumps[i]); the tables point into both, which
// must outlive them.
std::vector<CommTable> BuildCommTables(const std::vector<const dump::RankDump*>& dumps, const detect::JobFacts& facts);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_COMM_TABLE_H_
