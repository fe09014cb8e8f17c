// Compact, human-readable rank sets: "0-2,5", "rank 3", "ranks 0-4095".
//
// Formatting a list of n ranks costs O(n log n) and its text has one item per run of
// consecutive ranks, so a job of 2^20 ranks in one run prints as "0-1048575".
#ifndef NCCLWATCH_CORE_FORMAT_RANK_LIST_H_
#define NCCLWATCH_CORE_FORMAT_RANK_LIST_H_

#include <cstddef>
#include <string>
#include <vector>

namespace ncclwatch::format {

// Ranks first..last, both included; first <= last.
struct RankRange {
  int first = 0;
  int last = 0;
};

// The runs of consecutive ranks in `ranks`, ascending; input need not be sorted and
// duplicates count once.
std::vector<RankRange> ToRanges(std::vector<int> ranks);

// How many ranks `ranges` holds (the ranges must not overlap).
size_t CountRanks(const std::vector<RankRange>& ranges);

// "0-2,5" for {0,1,2,5}; "-" when empty. Ranges print in the order given.
std::string FormatRangeList(const std::vector<RankRange>& ranges);
std::string FormatRangeList(std::vector<int> ranks);

// "rank 5" / "ranks 0-2,5" / "no rank".
std::string FormatRanks(const std::vector<RankRange>& ranges);
std::string FormatRanks(const std::vector<int>& ranks);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_RANK_LIST_H_
