// The streaming reader against the DOM reader it replaces, over the fuzz corpus and every
// variant of it (dump_mutants.h): the same accept/reject decision, the same error line, the
// same dump.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/dump/dump_json.h"
#include "tests/analyze/crafted_job.h"
#include "tests/analyze/hostile_job.h"
#include "tests/dump/dump_mutants.h"

using namespace ncclwatch;

namespace {

std::string Outcome(const Result<dump::RankDump>& read) {
  return read.ok() ? "ok " + dump::ToJson(*read).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                   : "error " + read.error().message();
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
  for (const auto& d : testing::HostileStringsJob()) seeds.emplace_back("hostile", dump::ToJson(d).dump());
  return seeds;
}

}  // namespace

TEST_CASE("the streaming reader decides and says what the DOM reader did, on every variant of the corpus",
          "[dump][reader][differential]") {
  size_t compared = 0, accepted = 0;
  for (const auto& [name, seed] : Seeds()) {
    for (const testing::Mutant& m : testing::MutantsOf(seed)) {
      const std::string streamed = Outcome(dump::ParseDump(m.text));
      const std::string dom = Outcome(dump::ParseDumpWithDom(m.text));
      if (streamed != dom) {
        size_t at = 0;
        while (at < streamed.size() && at < dom.size() && streamed[at] == dom[at]) ++at;
        const size_t from = at > 150 ? at - 150 : 0;
        INFO(name << ": " << m.name);
        CHECK(streamed.substr(from, 300) == dom.substr(from, 300));
      }
      ++compared;
      accepted += dom.rfind("ok", 0) == 0;
    }
  }
  WARN(compared << " texts compared, " << accepted << " accepted");
}
