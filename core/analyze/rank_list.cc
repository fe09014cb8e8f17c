#include "core/analyze/rank_list.h"

#include <algorithm>

namespace ncclwatch::analyze {

std::string FormatRangeList(std::vector<int> ranks) {
  if (ranks.empty()) return "-";
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string FormatRanks(const std::vector<int>& ranks) {
  if (ranks.empty()) return "no rank";
  return (ranks.size() == 1 ? "rank " : "ranks ") + FormatRangeList(ranks);
}

}  // namespace ncclwatch::analyze
