// What the dump reader makes of every variant of the fuzz corpus (dump_mutants.h), against
// reader_outcomes.txt: the same accept/reject decision and the same error line as the reader
// before it, which parsed into nlohmann::json's DOM. The file was written by the DOM reader,
// and the streaming reader matched it on every variant compared (79237 of the corpus, and
// 42734 of the corpus and of dumps with every field schema 2 has today; the differential test
// went with the DOM reader). Per seed and kind of variant, a digest of every outcome; beside
// them, one variant in 127 spelt out, so that a change shows what it changed.
//
// A deliberate change of the reader or the writer's output: regenerate with
//   NCCLWATCH_WRITE_OUTCOMES=tests/core/dump/reader_outcomes.txt build/bin/dump_test "[outcomes]"
// and review the diff, which says which variants now read otherwise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/dump/dump_json.h"
#include "tests/core/analyze/hostile_job.h"
#include "tests/core/dump/dump_mutants.h"

using namespace ncclwatch;

namespace {

uint64_t Fnv1a(const std::string& text, uint64_t hash = 14695981039346656037ull) {
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

std::string HexOf(uint64_t value) {
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Printable ASCII as it is, every other byte as \xNN: error lines quote the input.
std::string Printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    }
  }
  return out;
}

// "ok <digest of the dump as written back>" or "error <the line>".
std::string Outcome(const std::string& text) {
  const Result<dump::RankDump> read = dump::ParseDump(text);
  if (!read.ok()) return "error " + read.error().message();
  return "ok " + HexOf(Fnv1a(dump::ToJson(*read).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

std::vector<std::pair<std::string, std::string>> Seeds() {
  std::vector<std::pair<std::string, std::string>> seeds;
  const char* source = std::getenv("NCCLWATCH_SOURCE_DIR");
  REQUIRE(source != nullptr);
  for (const auto& entry : std::filesystem::directory_iterator(std::string(source) + "/fuzz/corpus/dump_reader")) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    seeds.emplace_back(entry.path().filename().string(), text.str());
  }
  std::sort(seeds.begin(), seeds.end());
  const std::vector<dump::RankDump> hostile = testing::HostileStringsJob();
  for (size_t i = 0; i < hostile.size(); ++i) seeds.emplace_back("hostile" + std::to_string(i), dump::ToJson(hostile[i]).dump());
  return seeds;
}

// "cut", "byte", "set", "twice", "remove", "document", "as": the kind of a variant.
std::string KindOf(const std::string& name) {
  const size_t end = name.find_first_of(" @=");
  return name.substr(0, end);
}

std::vector<std::string> OutcomeLines() {
  std::vector<std::string> lines;
  size_t n = 0;
  for (const auto& [seed, text] : Seeds()) {
    std::map<std::string, std::pair<uint64_t, std::pair<size_t, size_t>>> by_kind;  // digest, (count, accepted)
    for (const testing::Mutant& m : testing::MutantsOf(text)) {
      const std::string outcome = Outcome(m.text);
      auto& [digest, counts] = by_kind.try_emplace(KindOf(m.name), 14695981039346656037ull, std::pair<size_t, size_t>{})
                                   .first->second;
      digest = Fnv1a(m.name + "\t" + outcome + "\n", digest);
      ++counts.first;
      counts.second += outcome.rfind("ok ", 0) == 0;
      if (n++ % 127 == 0) lines.push_back("sample " + seed + " | " + Printable(m.name) + " | " + Printable(outcome));
    }
    for (const auto& [kind, entry] : by_kind) {
      lines.push_back("digest " + seed + " " + kind + " " + std::to_string(entry.second.first) + " variants " +
                      std::to_string(entry.second.second) + " ok " + HexOf(entry.first));
    }
  }
  return lines;
}

}  // namespace

TEST_CASE("every variant of the corpus reads as the DOM reader read it", "[dump][reader][outcomes]") {
  const std::vector<std::string> lines = OutcomeLines();
  if (const char* out = std::getenv("NCCLWATCH_WRITE_OUTCOMES")) {
    std::ofstream file(out);
    for (const std::string& line : lines) file << line << '\n';
    WARN("wrote " << lines.size() << " lines to " << out);
    return;
  }
  std::ifstream file(std::string(std::getenv("NCCLWATCH_SOURCE_DIR")) + "/tests/core/dump/reader_outcomes.txt");
  std::vector<std::string> expected;
  for (std::string line; std::getline(file, line);) expected.push_back(line);
  REQUIRE(expected.size() == lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != expected[i]) CHECK(lines[i] == expected[i]);  // one line per difference
  }
}
