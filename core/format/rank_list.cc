#include "core/format/rank_list.h"

#include <algorithm>
#include <charconv>
#include <climits>
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

namespace {

// A rank: decimal digits only, at most INT_MAX.
std::optional<int> ParseRank(std::string_view text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > INT_MAX) return std::nullopt;
  return static_cast<int>(value);
}

std::optional<RankRange> ParseRange(std::string_view item) {
  const size_t dash = item.find('-');
  const std::optional<int> first = ParseRank(item.substr(0, dash));
  if (!first) return std::nullopt;
  if (dash == std::string_view::npos) return RankRange{*first, *first};
  const std::optional<int> last = ParseRank(item.substr(dash + 1));
  if (!last || *last < *first) return std::nullopt;
  return RankRange{*first, *last};
}

}  // namespace

std::optional<std::vector<int>> ParseRangeList(std::string_view text, size_t max_ranks) {
  if (text == "-") return std::vector<int>{};
  std::vector<RankRange> ranges;
  size_t count = 0;
  while (true) {
    const size_t comma = text.find(',');
    const std::optional<RankRange> range = ParseRange(text.substr(0, comma));
    if (!range) return std::nullopt;
    count += CountRanks({*range});
    if (count > max_ranks) return std::nullopt;
    ranges.push_back(*range);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::vector<int> ranks;
  ranks.reserve(count);
  for (const RankRange& r : ranges) {
    for (int64_t rank = r.first; rank <= r.last; ++rank) ranks.push_back(static_cast<int>(rank));
  }
  return ranks;
}

std::string FormatRanks(const std::vector<RankRange>& ranges) {
  if (ranges.empty()) return "no rank";
  return (CountRanks(ranges) == 1 ? "rank " : "ranks ") + FormatRangeList(ranges);
}

std::string FormatRanks(const std::vector<int>& ranks) { return FormatRanks(ToRanges(ranks)); }

std::string FormatRanksVerb(const std::vector<RankRange>& ranges, std::string_view singular, std::string_view plural) {
  // "no rank" is grammatically singular: "no rank has".
  return FormatRanks(ranges) + " " + std::string(CountRanks(ranges) > 1 ? plural : singular);
}

std::string FormatRanksVerb(const std::vector<int>& ranks, std::string_view singular, std::string_view plural) {
  return FormatRanksVerb(ToRanges(ranks), singular, plural);
}

}  // namespace ncclwatch::format
