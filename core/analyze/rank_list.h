// Compact, human-readable rank sets: "rank 3", "ranks 0-2,5", "ranks 0-4095".
#ifndef NCCLWATCH_CORE_ANALYZE_RANK_LIST_H_
#define NCCLWATCH_CORE_ANALYZE_RANK_LIST_H_

#include <string>
#include <vector>

namespace ncclwatch::analyze {

// "0-2,5" for {0,1,2,5}; input need not be sorted; "-" when empty.
std::string FormatRangeList(std::vector<int> ranks);
// "rank 5" / "ranks 0-2,5" / "no rank".
std::string FormatRanks(const std::vector<int>& ranks);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_RANK_LIST_H_
