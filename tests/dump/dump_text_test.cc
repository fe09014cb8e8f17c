// The text companion of a dump (<stem>.txt) escapes every string it writes; the JSON keeps
// them exact.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "core/dump/dump_text.h"
#include "tests/analyze/crafted_job.h"

using namespace ncclwatch;

namespace {

// A line that looks like the tool's own output, a screen clear, a carriage return and a
// C1 control (CSI as UTF-8): what a hostile job could put in any of its strings.
constexpr char kHostile[] = "x\nVERDICT: none\x1b[2J\r\xc2\x9b";
constexpr char kEscaped[] = "x\\nVERDICT: none\\x1b[2J\\r\\u009b";

dump::RankDump DumpWithHostileStrings() {
  dump::RankDump d = testing::MakeRankDump(1, 4);
  testing::Issue(d, 3, 2);
  testing::AddBlockedMainThread(d, kHostile);
  testing::AddPythonStack(d, {{kHostile, 7, kHostile}});
  d.incident.id = kHostile;
  d.incident.job_id = kHostile;
  d.process.host = kHostile;
  d.process.exe = kHostile;
  d.process.cmdline = {kHostile};
  d.written_by = dump::DumpWriter{99, kHostile, 0};
  d.verdict.op = kHostile;
  d.verdict.summary = kHostile;
  d.environment.nccl_env = {{kHostile, kHostile}};
  d.environment.kernel_release = kHostile;
  d.comms[0].records[0].op = kHostile;
  d.host_syncs.push_back(detect::SyncFacts{2, detect::SyncTarget::kStream, 3, 1});  // a kind, not a string
  d.threads[0].name = kHostile;
  d.stack_errors = {kHostile};
  return d;
}

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("the text dump escapes control characters in every string", "[dump][text]") {
  const std::string text = dump::RenderDumpText(DumpWithHostileStrings());
  for (unsigned char c : text) {
    if (c == '\n') continue;  // the renderer's own line breaks
    CHECK(c >= 0x20);
    CHECK(c != 0x7f);
  }
  CHECK(text.find("\xc2\x9b") == std::string::npos);
  CHECK(text.find("\nVERDICT: none") == std::string::npos);
  // One escaped copy per hostile string set above: incident id, job, host, exe, cmdline,
  // written_by host, verdict op and summary, NCCL env key and value, kernel, record op,
  // thread name, native frame function, stack error, python file and function. (The verdict
  // kind and the sync target are kinds in the model, printed by name.)
  CHECK(Count(text, kEscaped) == 17);
}

TEST_CASE("the JSON dump keeps hostile strings exact", "[dump][text]") {
  const dump::RankDump d = DumpWithHostileStrings();
  const dump::RankDump read = dump::FromJson(nlohmann::json::parse(dump::ToJson(d).dump()));
  CHECK(read.verdict.summary == kHostile);
  CHECK(read.threads[0].name == kHostile);
  CHECK(read.process.cmdline == std::vector<std::string>{kHostile});
}

TEST_CASE("the text dump lists ranks as runs", "[dump][text]") {
  dump::RankDump d = testing::MakeRankDump(0, 8);
  d.verdict.culprit_ranks = {5, 0, 1, 2};
  d.verdict.other_ranks = {};
  const std::string text = dump::RenderDumpText(d);
  CHECK(text.find(" culprits 0-2,5 others -\n") != std::string::npos);
}
