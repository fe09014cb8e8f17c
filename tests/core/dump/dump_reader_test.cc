#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"
#include "tests/core/analyze/crafted_job.h"
#include "tests/core/dump/temp_dir.h"

using namespace ncclwatch;

namespace {

std::string ValidDumpText() { return dump::ToJson(testing::MakeRankDump(0, 2)).dump(); }

// The reader's error for a file with `contents`; fails the test if the file is accepted.
std::string ErrorFor(const testing::TempDir& dir, const std::string& contents) {
  dir.Write("bad.json", contents);
  dump::RankDump out;
  std::string error;
  bool ok = dump::ReadDumpFile(dir.File("bad.json"), &out, &error);
  CHECK_FALSE(ok);
  CHECK(error.find('\n') == std::string::npos);
  CHECK(error.rfind(dir.File("bad.json"), 0) == 0);
  return error;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("bad dump files give a one-line error naming the problem", "[dump][reader]") {
  testing::TempDir dir;
  std::string valid = ValidDumpText();

  CHECK(Contains(ErrorFor(dir, valid.substr(0, valid.size() / 2)), "not valid JSON (truncated or corrupt)"));
  CHECK(Contains(ErrorFor(dir, ""), "empty file"));
  CHECK(Contains(ErrorFor(dir, "\x7f" "ELF\x02\x01\x01"), "not valid JSON"));
  CHECK(Contains(ErrorFor(dir, R"({"traceEvents": []})"), "foreign JSON: no \"schema\" field"));
  CHECK(Contains(ErrorFor(dir, R"([1, 2, 3])"), "foreign JSON: top level is not an object"));
  CHECK(Contains(ErrorFor(dir, R"({"schema": "other.tool", "version": 1})"),
                 "foreign JSON: schema is \"other.tool\""));

  nlohmann::json future = nlohmann::json::parse(valid);
  future["version"] = dump::kSchemaVersion + 1;
  CHECK(Contains(ErrorFor(dir, future.dump()), "dump version " + std::to_string(dump::kSchemaVersion + 1) +
                                                   " is newer than this ncclwatch supports (" +
                                                   std::to_string(dump::kSchemaVersion) + ")"));

  nlohmann::json wrong_type = nlohmann::json::parse(valid);
  wrong_type["process"]["pid"] = "twelve";
  CHECK(Contains(ErrorFor(dir, wrong_type.dump()), "field 'process.pid' must be an integer"));

  nlohmann::json missing = nlohmann::json::parse(valid);
  missing.erase("process");
  CHECK(Contains(ErrorFor(dir, missing.dump()), "field 'process' is missing"));

  nlohmann::json bad_rank = nlohmann::json::parse(valid);
  bad_rank["comms"][0]["rank"] = 9;
  CHECK(Contains(ErrorFor(dir, bad_rank.dump()), "comms[0].rank' must be within [0, nranks)"));

  nlohmann::json huge = nlohmann::json::parse(valid);
  huge["comms"][0]["nranks"] = 2000000000;
  CHECK(Contains(ErrorFor(dir, huge.dump()), "field 'comms[0].nranks' is out of range"));

  nlohmann::json bad_hash = nlohmann::json::parse(valid);
  bad_hash["comms"][0]["comm"] = "feed";
  CHECK(Contains(ErrorFor(dir, bad_hash.dump()), "comms[0].comm' must be a hex string"));

  CHECK(Contains(ErrorFor(dir, std::string(100000, '[')), "not valid JSON"));
}

TEST_CASE("reading a directory finds dumps recursively and sorts out the bad ones", "[dump][reader]") {
  testing::TempDir dir;
  std::vector<dump::RankDump> job = testing::HealthyJob(3, 4);
  REQUIRE(dump::WriteDump(job[0], dir.path()).ok());
  std::filesystem::create_directories(dir.File("node1"));
  REQUIRE(dump::WriteDump(job[1], dir.File("node1")).ok());
  dir.Write(".rank2-node0-1002-inc1.json.tmp.77", "{ half");  // a writer's temporary: ignored
  dir.Write("notes.txt", "not json, not read");
  dir.Write("broken.json", "{\"schema\": \"ncclwatch.dump\", ");

  dump::DumpSet set = dump::ReadDumpDir(dir.path());
  CHECK(set.error.empty());
  CHECK(set.dumps.size() == 2);
  REQUIRE(set.rejected.size() == 1);
  CHECK(set.rejected[0].path == dir.File("broken.json"));
}

TEST_CASE("a missing directory or a file given as directory is a directory-level error", "[dump][reader]") {
  CHECK(dump::ReadDumpDir("/nonexistent/dumps").error == "/nonexistent/dumps: no such directory");
  testing::TempDir dir;
  dir.Write("f.json", "{}");
  CHECK(dump::ReadDumpDir(dir.File("f.json")).error == dir.File("f.json") + ": not a directory");
}
