#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"
#include "core/dump/replay_json.h"
#include "tests/core/analyze/crafted_job.h"
#include "tests/core/dump/temp_dir.h"

using namespace ncclwatch;

namespace {

std::string ValidDumpText() { return dump::ToJson(testing::MakeRankDump(0, 2)).dump(); }

// The reader's error for a file with `contents`; fails the test if the file is accepted.
std::string ErrorFor(const testing::TempDir& dir, const std::string& contents) {
  dir.Write("bad.json", contents);
  const Result<dump::RankDump> read = dump::ReadDumpFile(dir.File("bad.json"));
  REQUIRE_FALSE(read.ok());
  const std::string& error = read.error().message();
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

  // A number no double holds is not a syntax error: nlohmann says so itself.
  nlohmann::json overflow = nlohmann::json::parse(valid);
  std::string overflow_text = overflow.dump();
  overflow_text.replace(overflow_text.find("\"world_size\":2"), 14, "\"world_size\":1e400");
  CHECK(Contains(ErrorFor(dir, overflow_text),
                 ": unreadable dump: [json.exception.out_of_range.406] number overflow parsing '1e400'"));
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

  dump::DumpSet set = dump::ReadDumpDir(dir.path()).value();
  CHECK(set.dumps.size() == 2);
  REQUIRE(set.rejected.size() == 1);
  CHECK(set.rejected[0].path == dir.File("broken.json"));
}

TEST_CASE("a missing directory or a file given as directory is a directory-level error", "[dump][reader]") {
  CHECK(dump::ReadDumpDir("/nonexistent/dumps").error().why == "/nonexistent/dumps: no such directory");
  testing::TempDir dir;
  dir.Write("f.json", "{}");
  CHECK(dump::ReadDumpDir(dir.File("f.json")).error().why == dir.File("f.json") + ": not a directory");
}

TEST_CASE("replays, captured records and a replay verdict read back; the newest 256 replays are kept",
          "[dump][reader][replays]") {
  testing::TempDir dir;
  dump::RankDump d = testing::MakeRankDump(0, 2);
  REQUIRE_FALSE(d.comms.empty());
  d.verdict.kind = detect::VerdictKind::kReplayHang;
  d.verdict.graph_label = "graph [AllReduce from #2 on comm 0xc0ffee]";
  detect::RecordFacts captured;
  captured.seq = 2;
  captured.op = "AllReduce";
  captured.captured = true;
  d.comms[0].records.push_back(captured);
  d.comms[0].replays_dropped = 3;
  // 600 replays: the reader drops the oldest 344 (kMaxReplaysPerComm is 256), counting them.
  for (uint64_t n = 1; n <= 600; ++n) {
    detect::ReplayFacts r;
    r.graph = 0xabc;
    r.replay = n;
    r.first_seq = 2;
    r.ops = 9;
    r.op_names = {"AllReduce", "AllReduce", "AllReduce", "AllReduce", "AllReduce", "AllReduce", "AllReduce",
                  "AllReduce", "AllReduce"};  // one more than the writer keeps
    r.complete_ns = n < 600 ? 1000 + n : 0;
    d.comms[0].replays.push_back(r);
  }
  dir.Write("replays.json", dump::ToJson(d).dump());
  const Result<dump::RankDump> read = dump::ReadDumpFile(dir.File("replays.json"));
  REQUIRE(read.ok());
  const detect::CommFacts& c = read.value().comms[0];
  CHECK(read.value().verdict.kind == detect::VerdictKind::kReplayHang);
  CHECK(read.value().verdict.graph_label == "graph [AllReduce from #2 on comm 0xc0ffee]");
  REQUIRE(c.records.size() == 1);
  CHECK(c.records[0].captured);
  REQUIRE(c.replays.size() == dump::kMaxReplaysPerComm);
  CHECK(c.replays.front().replay == 600 - dump::kMaxReplaysPerComm + 1);
  CHECK(c.replays.back().replay == 600);
  CHECK(c.replays.back().complete_ns == 0);
  CHECK(c.replays.back().graph == 0xabc);
  CHECK(c.replays.back().ops == 9);
  CHECK(c.replays.back().op_names.size() == 8);
  CHECK(c.replays_dropped == 3 + 600 - dump::kMaxReplaysPerComm);
}
