#include "core/format/rank_list.h"

#include <algorithm>
#include <cstdint>

namespace ncclwatch::format {

std::vector<RankRange> ToRanges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::vector<RankRange> ranges;
  for (int rank : ranks) {
    // Compared as rank - 1 == last, never last + 1, which overflows at INT_MAX.
    if (!ranges.empty() && rank - 1 == ranges.back().last) {
      ranges.back().last = rank;
    } else {
      ranges.push_back(RankRange{rank, rank});
    }
  }
  return ranges;
}

size_t CountRanks(const std::vector<RankRange>& ranges) {
  size_t count = 0;
  for (const auto& r : ranges) {
    count += static_cast<size_t>(static_cast<int64_t>(r.last) - static_cast<int64_t>(r.first)) + 1;
  }
  return count;
}

std::string FormatRangeList(const std::vector<RankRange>& ranges) {
  if (ranges.empty()) return "-";
  std::string out;
  for (const auto& r : ranges) {
    if (!out.empty()) out += ',';
    out += std::to_string(r.first);
    if (r.last != r.first) out += "-" + std::to_string(r.last);
  }
  return out;
}

std::string FormatRangeList(std::vector<int> ranks) { return FormatRangeList(ToRanges(std::move(ranks))); }

std::string FormatRanks(const std::vector<RankRange>& ranges) {
  if (ranges.empty()) return "no rank";
  return (CountRanks(ranges) == 1 ? "rank " : "ranks ") + FormatRangeList(ranges);
}

std::string FormatRanks(const std::vector<int>& ranks) { return FormatRanks(ToRanges(ranks)); }

}  // namespace ncclwatch::format
