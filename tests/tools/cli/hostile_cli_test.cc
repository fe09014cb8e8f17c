// The CLI on hostile input: dumps that tried to loop, go quadratic, exhaust memory or paint
// the terminal. Every run has a deadline (RunProcess kills the child when it passes).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "core/shm/snapshot.h"
#include "tests/core/analyze/crafted_job.h"
#include "tests/core/analyze/hostile_job.h"
#include "tests/tools/cli/run_process.h"
#include "tests/core/dump/temp_dir.h"
#include "tools/cli/status_table.h"

using namespace ncclwatch;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitIncident = 3;
constexpr auto kDeadline = std::chrono::seconds(10);

testing::ProcessResult Run(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
  args.insert(args.begin(), testing::NcclwatchBinary());
  testing::ProcessResult r = testing::RunProcess(args, env, kDeadline);
  REQUIRE_FALSE(r.timed_out);
  return r;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::string> LinesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The only line starting with "VERDICT:", or "" when there are none or several.
std::string TheVerdictLine(const std::string& out) {
  std::string found;
  size_t count = 0;
  for (const auto& line : LinesOf(out)) {
    if (line.rfind("VERDICT:", 0) == 0) found = line, ++count;
  }
  return count == 1 ? found : "";
}

// testing::HostileStringsJob next to two unusable files whose names hold an escape sequence
// and invalid UTF-8.
void WriteHostileStringsJob(const testing::TempDir& dir) {
  const std::string& evil = testing::kHostileText;
  auto job = testing::HostileStringsJob();
  testing::WriteJob(job, dir.path());
  dir.Write("zz" + evil + ".json", "{");
  dir.Write("zz-bad-utf8-\xff.json", "{");
}

}  // namespace

TEST_CASE("analyze escapes every dump string: no escape byte, one VERDICT line", "[cli][hostile]") {
  testing::TempDir dir;
  WriteHostileStringsJob(dir);
  testing::ProcessResult r = Run({"analyze", dir.path()});
  INFO(r.out);
  CHECK(r.exit_status == kExitIncident);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(TheVerdictLine(r.out) == "VERDICT: collective_hang");
  CHECK(Contains(r.out, "collective #3 AllReduce\\x1b[2J\\nVERDICT: fake"));
  CHECK(Contains(r.out, "NCCL_P2P_DISABLE=1\\x1b[2J\\nVERDICT: fake"));
  CHECK(Contains(r.out, "zz\\x1b[2J\\nVERDICT: fake.json: not valid JSON"));
  CHECK(Contains(r.out, "zz-bad-utf8-\\xff.json: not valid JSON"));
  CHECK(r.err.empty());
}

TEST_CASE("analyze --json keeps exact strings and survives invalid UTF-8 in file names", "[cli][hostile]") {
  testing::TempDir dir;
  WriteHostileStringsJob(dir);
  testing::ProcessResult r = Run({"analyze", dir.path(), "--json"});
  CHECK(r.exit_status == kExitIncident);
  CHECK(r.out.find('\x1b') == std::string::npos);  // JSON writes it as \u001b
  json report = json::parse(r.out);
  CHECK(report["verdict"]["op"] == "AllReduce" + testing::kHostileText);
  REQUIRE(report["rejected"].size() == 2);
  // The invalid byte became U+FFFD instead of an exception.
  CHECK(Contains(report["rejected"][1].get<std::string>(), "zz-bad-utf8-\xef\xbf\xbd.json"));
}

TEST_CASE("trace reports skipped files on one escaped line each", "[cli][hostile]") {
  testing::TempDir dir, out;
  WriteHostileStringsJob(dir);
  testing::ProcessResult r = Run({"trace", dir.path(), "-o", out.File("t.json")});
  CHECK(r.exit_status == 0);
  CHECK(r.err.find('\x1b') == std::string::npos);
  std::vector<std::string> lines = LinesOf(r.err);
  REQUIRE(lines.size() == 2);
  for (const auto& line : lines) CHECK(line.rfind("ncclwatch trace: skipped ", 0) == 0);
  CHECK(r.out.find('\x1b') == std::string::npos);
}

TEST_CASE("a mismatch at collective #2^64-3 ends in bounded time", "[cli][hostile]") {
  testing::TempDir dir;
  const uint64_t seq = std::numeric_limits<uint64_t>::max() - 2;
  auto job = testing::HealthyJob(3, 0);
  for (int r = 0; r < 3; ++r) {
    detect::CommFacts& c = testing::Comm(job[r]);
    detect::RecordFacts record;
    record.seq = seq;
    record.op = r == 2 ? "Broadcast" : "AllReduce";
    record.enqueue_ns = 5;
    c.records = {record};
    c.last_enqueued_seq = seq;
    c.last_completed_seq = seq - 1;
  }
  testing::WriteJob(job, dir.path());
  testing::ProcessResult r = Run({"analyze", dir.path()});
  CHECK(r.exit_status == kExitIncident);
  CHECK(TheVerdictLine(r.out) == "VERDICT: mismatch");
  CHECK(Contains(r.out, "collective #18446744073709551613 Broadcast"));
}

TEST_CASE("a communicator of 2^20 ranks is analysed and traced within the deadline", "[cli][hostile][scale]") {
  testing::TempDir dir, out;
  testing::WriteMostlyMissingJob(dir.path(), 4);
  auto start = std::chrono::steady_clock::now();
  testing::ProcessResult r = Run({"analyze", dir.path()});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("analyze took " << seconds << " s");
  CHECK(seconds < 10.0);
  CHECK(r.exit_status == kExitIncident);
  CHECK(TheVerdictLine(r.out) == "VERDICT: straggler");
  CHECK(Contains(r.out, "culprits: ranks 4-1048575"));
  testing::ProcessResult t = Run({"trace", dir.path(), "-o", out.File("t.json")});
  CHECK(t.exit_status == 0);
}

TEST_CASE("symlinks to one dump count once against --max-input-bytes", "[cli][budget]") {
  testing::TempDir outside, dir;
  dump::RankDump d = testing::MakeRankDump(0, 1);
  d.process.cmdline.push_back(std::string(100'000, 'x'));
  const std::string text = dump::ToJson(d).dump();
  outside.Write("real.json", text);
  for (const char* name : {"a.json", "b.json", "c.json", "d.json"}) {
    fs::create_symlink(outside.File("real.json"), dir.File(name));
  }
  const std::string budget = std::to_string(text.size() * 3 / 2);
  testing::ProcessResult r = Run({"analyze", dir.path(), "--max-input-bytes", budget});
  CHECK(r.exit_status == 0);
  CHECK(Contains(r.out, "read 1 dump from 1 host"));

  dir.Write("e.json", text);  // a second real file: now over the budget
  testing::ProcessResult over = Run({"analyze", dir.path(), "--max-input-bytes", budget});
  CHECK(over.exit_status == kExitUsage);
  CHECK(over.out.empty());
  REQUIRE(LinesOf(over.err).size() == 1);
  CHECK(Contains(over.err, "ncclwatch analyze: " + dir.path() + ": the dumps exceed the input budget of " + budget +
                               " bytes"));
  CHECK(Contains(over.err, "raise it with --max-input-bytes"));
  CHECK(Run({"trace", dir.path(), "-o", outside.File("t.json"), "--max-input-bytes", budget}).exit_status ==
        kExitUsage);
  // Units are powers of 1024; the default (512 MiB) holds both.
  CHECK(Run({"analyze", dir.path(), "--max-input-bytes", "1kb"}).exit_status == kExitUsage);
  CHECK(Run({"analyze", dir.path(), "--max-input-bytes", "1MiB"}).exit_status == 0);
  CHECK(Run({"analyze", dir.path()}).exit_status == 0);
  CHECK(Run({"analyze", dir.path(), "--max-input-bytes", "lots"}).exit_status == kExitUsage);
}

TEST_CASE("doctor escapes environment values", "[cli][hostile][doctor]") {
  testing::ProcessResult r = Run({"doctor"}, {{"NCCL_EVIL", "x" + testing::kHostileText}});
  CHECK(r.exit_status == 0);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(Contains(r.out, "NCCL_EVIL=x\\x1b[2J\\nVERDICT: fake"));
  for (const auto& line : LinesOf(r.out)) CHECK(line.rfind("VERDICT:", 0) != 0);
}

TEST_CASE("status escapes the job id from shared memory", "[cli][hostile][status]") {
  shm::JobSnapshot snapshot;
  snapshot.job_id = "job" + testing::kHostileText;
  snapshot.processes.emplace_back();
  std::string table = tools::RenderStatusTable(snapshot, 0);
  CHECK(table.find('\x1b') == std::string::npos);
  CHECK(Contains(table, "job job\\x1b[2J\\nVERDICT: fake: 1 process on"));
  for (const auto& line : LinesOf(table)) CHECK(line.rfind("VERDICT:", 0) != 0);
}
