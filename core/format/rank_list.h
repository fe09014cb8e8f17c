// Compact, human-readable rank sets: "0-2,5", "rank 3", "ranks 0-4095".
//
// Formatting a list of n ranks costs O(n log n) and its text has one item per run of
// consecutive ranks, so a job of 2^20 ranks in one run prints as "0-1048575".
#ifndef NCCLWATCH_CORE_FORMAT_RANK_LIST_H_
#define NCCLWATCH_CORE_FORMAT_RANK_LIST_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
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

// The ranks a FormatRangeList text names, in the order written ("0-2,5" -> {0,1,2,5}; "-"
// -> {}); a plain comma-separated list ("5,2") reads too. nullopt for anything else (empty
// items, spaces, signs, a range written backwards, a number above INT_MAX) and when the text
// names more than `max_ranks` ranks: a few bytes ("0-2147483647") can name 2^31 of them, so
// the count is checked before anything is allocated.
std::optional<std::vector<int>> ParseRangeList(std::string_view text, size_t max_ranks);

// "rank 5" / "ranks 0-2,5" / "no rank".
std::string FormatRanks(const std::vector<RankRange>& ranges);
std::string FormatRanks(const std::vector<int>& ranks);

// FormatRanks and the verb form that agrees with it: "rank 1 has", "ranks 0,2 have",
// "no rank has"... (the count is of distinct ranks).
std::string FormatRanksVerb(const std::vector<RankRange>& ranges, std::string_view singular, std::string_view plural);
std::string FormatRanksVerb(const std::vector<int>& ranks, std::string_view singular, std::string_view plural);

}  // namespace ncclwatch::format

#endif  // NCCLWATCH_CORE_FORMAT_RANK_LIST_H_
