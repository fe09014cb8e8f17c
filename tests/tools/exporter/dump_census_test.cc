// tools/exporter/dump_census.h: dumps and incidents counted from a dump directory.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "tests/core/analyze/crafted_job.h"
#include "tests/core/dump/temp_dir.h"
#include "tools/exporter/dump_census.h"

namespace ncclwatch::tools {
namespace {

std::string DumpText(int rank, const std::string& incident, const std::string& kind, const std::string& host) {
  dump::RankDump d = testing::MakeRankDump(rank, 4);
  d.incident.id = incident;
  d.incident.job_id = "job-a";
  d.process.host = host;
  nlohmann::json doc = dump::ToJson(d);
  doc["verdict"]["kind"] = kind;  // as a file holds it: any string, a forged one included
  return doc.dump();
}

}  // namespace

TEST_CASE("dumps are counted per (job, host), incidents once per id whatever the ranks dumping it") {
  testing::TempDir dir;
  dir.Write("r0.json", DumpText(0, "inc1", "straggler", "node0"));
  dir.Write("r1.json", DumpText(1, "inc1", "straggler", "node0"));
  dir.Write("r0b.json", DumpText(0, "inc2", "collective_hang", "node0"));
  dir.Write("node1/r2.json", DumpText(2, "inc1", "straggler", "node1"));  // one subdirectory per host
  dir.Write("r3.json", DumpText(3, "inc3", "made_up_kind\n", "node0"));
  DumpCensus census(dir.path());
  CHECK(census.Scan().ok());
  auto counts = census.counts();
  REQUIRE(counts.size() == 2);
  const DumpCounts& node0 = counts[{"job-a", "node0"}];
  CHECK(node0.dumps == 4);
  CHECK(node0.incidents_by_kind.at("straggler") == 1);
  CHECK(node0.incidents_by_kind.at("collective_hang") == 1);
  CHECK(node0.incidents_by_kind.at("unknown") == 1);  // only documented kinds become label values
  CHECK(counts[{"job-a", "node1"}].dumps == 1);
  CHECK(census.rejected_files() == 0);
}

TEST_CASE("what is not a dump is skipped or counted as rejected, never fatal") {
  testing::TempDir dir;
  dir.Write("garbage.json", "{not json");
  dir.Write(".tmp-r0.json", DumpText(0, "inc1", "straggler", "node0"));  // the writer's temporary
  dir.Write("notes.txt", "hello");
  dir.Write("a/b/deep.json", DumpText(0, "inc9", "straggler", "node0"));  // deeper than one level
  REQUIRE(symlink(dir.File("garbage.json").c_str(), dir.File("link.json").c_str()) == 0);
  REQUIRE(mkfifo(dir.File("fifo.json").c_str(), 0600) == 0);  // would block a plain open
  DumpCensus census(dir.path());
  CHECK(census.Scan().ok());
  CHECK(census.counts().empty());
  CHECK(census.rejected_files() == 1);
  // Rescanning an unchanged directory parses nothing again and gives the same answer.
  CHECK(census.Scan().ok());
  CHECK(census.counts().empty());
  CHECK(census.rejected_files() == 1);
}

TEST_CASE("a missing directory is one error line and the last counts") {
  testing::TempDir dir;
  dir.Write("r0.json", DumpText(0, "inc1", "straggler", "node0"));
  DumpCensus census(dir.path() + "/sub");
  const Status missing = census.Scan();
  CHECK_FALSE(missing.ok());
  CHECK(missing.message().find("cannot read dump directory") == 0);
  CHECK(missing.message().find('\n') == std::string::npos);
  CHECK(census.counts().empty());
  // A directory that goes away after a good scan keeps that scan's counts.
  dir.Write("sub/r1.json", DumpText(1, "inc1", "straggler", "node0"));
  REQUIRE(census.Scan().ok());
  CHECK(census.counts().size() == 1);
  std::filesystem::remove_all(dir.File("sub"));
  CHECK_FALSE(census.Scan().ok());
  CHECK(census.counts().size() == 1);
  CHECK(census.counts().begin()->second.dumps == 1);
}

}  // namespace ncclwatch::tools
