#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "core/format/duration.h"
#include "core/format/hex.h"
#include "core/format/plural.h"
#include "core/format/rank_list.h"

using namespace ncclwatch::format;

TEST_CASE("hex is 0x and lowercase digits, unpadded as NCCL prints commHash", "[format][hex]") {
  CHECK(FormatHex(0) == "0x0");
  CHECK(FormatHex(0x1f) == "0x1f");
  CHECK(FormatHex(0xfeedface12345678ull) == "0xfeedface12345678");
  CHECK(FormatHex(std::numeric_limits<uint64_t>::max()) == "0xffffffffffffffff");
}

TEST_CASE("hex parses strictly and round-trips", "[format][hex]") {
  CHECK(ParseHex("0x1f") == 0x1fu);
  CHECK(ParseHex("0XABCdef") == 0xabcdefu);
  CHECK(ParseHex("0xffffffffffffffff") == std::numeric_limits<uint64_t>::max());
  for (const char* bad : {"", "0x", "1f", "x1f", "0x1g", "0x-1", " 0x1", "0x1 ", "0x10000000000000000", "+0x1"}) {
    CHECK_FALSE(ParseHex(bad).has_value());
  }
  for (uint64_t v : {0ull, 1ull, 0x8000000000000000ull, 0x123456789abcdefull}) {
    CHECK(ParseHex(FormatHex(v)) == v);
  }
}

TEST_CASE("rank lists collapse runs and count distinct ranks", "[format][ranks]") {
  CHECK(FormatRangeList(std::vector<int>{}) == "-");
  CHECK(FormatRangeList(std::vector<int>{3}) == "3");
  CHECK(FormatRangeList(std::vector<int>{5, 0, 1, 2}) == "0-2,5");
  CHECK(FormatRangeList(std::vector<int>{0, 1, 3}) == "0-1,3");
  CHECK(FormatRangeList(std::vector<int>{2, 2, 1, 1}) == "1-2");
  CHECK(FormatRanks(std::vector<int>{}) == "no rank");
  CHECK(FormatRanks(std::vector<int>{7}) == "rank 7");
  CHECK(FormatRanks(std::vector<int>{7, 7}) == "rank 7");
  CHECK(FormatRanks(std::vector<int>{7, 8}) == "ranks 7-8");
  const int max = std::numeric_limits<int>::max();
  CHECK(FormatRangeList(std::vector<int>{max - 1, max}) == std::to_string(max - 1) + "-" + std::to_string(max));
}

TEST_CASE("rank lists parse back, strictly and within a bound", "[format][ranks]") {
  using Ranks = std::vector<int>;
  for (const Ranks& ranks : {Ranks{}, Ranks{3}, Ranks{0, 1, 2, 5}, Ranks{0, 1, 3}, Ranks{7, 9, 10, 11, 40}}) {
    CHECK(ParseRangeList(FormatRangeList(ranks), 100) == ranks);
  }
  CHECK(ParseRangeList("5,2", 100) == Ranks{5, 2});  // plain lists, in the order written
  CHECK(ParseRangeList("2147483646-2147483647", 100) == Ranks{2147483646, 2147483647});
  for (const char* bad : {"", ",", "1,", ",1", "1,,2", " 1", "1 ", "+1", "-1", "1-", "3-1", "1-2-3", "a", "0x1",
                          "2147483648", "1-2147483648", "--"}) {
    CAPTURE(bad);
    CHECK_FALSE(ParseRangeList(bad, 100).has_value());
  }
  CHECK(ParseRangeList("0-99", 100).has_value());
  CHECK_FALSE(ParseRangeList("0-100", 100).has_value());
  CHECK_FALSE(ParseRangeList("0-49,50-100", 100).has_value());
  CHECK_FALSE(ParseRangeList("0-2147483647", size_t{1} << 20).has_value());  // refused before allocating
}

TEST_CASE("2^20 consecutive ranks format as one range", "[format][ranks]") {
  std::vector<int> ranks(1 << 20);
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(ranks.size() - 1 - i);
  CHECK(FormatRanks(ranks) == "ranks 0-1048575");
  std::vector<RankRange> ranges = ToRanges(ranks);
  REQUIRE(ranges.size() == 1);
  CHECK(CountRanks(ranges) == ranks.size());
  CHECK(FormatRanks(std::vector<RankRange>{{0, 3}, {9, 9}}) == "ranks 0-3,9");
  CHECK(FormatRanks(std::vector<RankRange>{{9, 9}}) == "rank 9");
}

TEST_CASE("durations: tenths below a minute, then two units", "[format][duration]") {
  CHECK(FormatDuration(0) == "0.0s");
  CHECK(FormatDuration(99'999'999) == "0.0s");
  CHECK(FormatDuration(1'250'000'000) == "1.2s");
  CHECK(FormatDuration(59'999'999'999) == "59.9s");
  CHECK(FormatDuration(60'000'000'000) == "1m00s");
  CHECK(FormatDuration(3'599'000'000'000) == "59m59s");
  CHECK(FormatDuration(3'600'000'000'000) == "1h00m");
  CHECK(FormatDuration(86'399'000'000'000) == "23h59m");
  CHECK(FormatDuration(90'000'000'000'000) == "1d01h");
  CHECK(FormatDuration(std::numeric_limits<uint64_t>::max()) == "213503d23h");
}

TEST_CASE("ages clamp at zero when the start lies after now", "[format][duration]") {
  CHECK(FormatAge(80'200'000'000, 0) == "1m20s");
  CHECK(FormatAge(10'000'000'000, 4'700'000'000) == "5.3s");
  CHECK(FormatAge(1, 2) == "0.0s");
}

TEST_CASE("rank sets agree with their verb", "[format][ranks][plural]") {
  CHECK(FormatRanksVerb(std::vector<int>{1}, "has", "have") == "rank 1 has");
  CHECK(FormatRanksVerb(std::vector<int>{0, 2}, "waits", "wait") == "ranks 0,2 wait");
  CHECK(FormatRanksVerb(std::vector<int>{3, 3}, "is", "are") == "rank 3 is");  // distinct ranks count
  CHECK(FormatRanksVerb(std::vector<int>{}, "has", "have") == "no rank has");
  CHECK(FormatRanksVerb(std::vector<RankRange>{{0, 4095}}, "has", "have") == "ranks 0-4095 have");
}

TEST_CASE("counts agree with their noun", "[format][plural]") {
  CHECK(CountOf(1, "dump", "dumps") == "1 dump");
  CHECK(CountOf(0, "dump", "dumps") == "0 dumps");
  CHECK(CountOf(2, "culprit", "culprits") == "2 culprits");
  CHECK(Agree(1, "waits", "wait") == "waits");
  CHECK(Agree(3, "waits", "wait") == "wait");
}
