// The text companion of a dump (<stem>.txt) escapes every string it writes; the JSON keeps
// them exact.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "core/dump/dump_text.h"
#include "tests/core/analyze/crafted_job.h"

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
  d.comms[0].records[0].call_site = kHostile;
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
  // record call site, thread name, native frame function, stack error, python file and
  // function. (The verdict kind and the sync target are kinds in the model, printed by name.)
  CHECK(Count(text, kEscaped) == 18);
}

TEST_CASE("the JSON dump keeps hostile strings exact", "[dump][text]") {
  const dump::RankDump d = DumpWithHostileStrings();
  const dump::RankDump read = dump::ParseDump(dump::ToJson(d).dump()).value();
  CHECK(read.verdict.summary == kHostile);
  CHECK(read.threads[0].name == kHostile);
  CHECK(read.process.cmdline == std::vector<std::string>{kHostile});
  CHECK(read.comms[0].records[0].call_site == kHostile);
}

TEST_CASE("a record's call site is written only when known (NCCLWATCH_CALL_SITES=1)", "[dump][text]") {
  dump::RankDump d = testing::MakeRankDump(1, 4);
  testing::Issue(d, 3, 2);
  const nlohmann::json off = dump::ToJson(d);
  for (const auto& r : off["comms"][0]["records"]) CHECK_FALSE(r.contains("call_site"));
  CHECK(dump::RenderDumpText(d).find("issued at") == std::string::npos);
  d.comms[0].records[0].call_site = "/job/train.py:88 in step";
  const dump::RankDump read = dump::ParseDump(dump::ToJson(d).dump()).value();
  CHECK(read.comms[0].records[0].call_site == "/job/train.py:88 in step");
  CHECK(dump::RenderDumpText(d).find(", issued at /job/train.py:88 in step\n") != std::string::npos);
}

TEST_CASE("the text dump lists ranks as runs", "[dump][text]") {
  dump::RankDump d = testing::MakeRankDump(0, 8);
  d.verdict.culprit_ranks = {5, 0, 1, 2};
  d.verdict.other_ranks = {};
  const std::string text = dump::RenderDumpText(d);
  CHECK(text.find(" culprits 0-2,5 others -\n") != std::string::npos);
}

TEST_CASE("the text dump names datatypes, ops, versions and streams, and ages times", "[dump][text]") {
  dump::RankDump d = testing::MakeRankDump(0, 2);
  testing::Issue(d, 3, 2);
  d.incident.detected_mono_ns = 100'000'000'000;
  auto& r = d.comms[0].records.back();
  r.datatype = 9;
  r.redop = 7;
  r.root = -1;
  r.peer = -1;
  r.stream = 0;
  r.enqueue_ns = 94'700'000'000;
  d.comms[0].async_error = 7;
  d.environment.nccl_version = 22809;
  d.environment.cuda_runtime_version = 13000;
  d.host_syncs.push_back(detect::SyncFacts{94'700'000'000, detect::SyncTarget::kStream, 0, 812});
  d.host_syncs.push_back(
      detect::SyncFacts{94'700'000'000, detect::SyncTarget::kStream, 0x7f00, 813, 0, detect::SyncApi::kDriver});
  const std::string text = dump::RenderDumpText(d);
  CHECK(text.find("datatype=bfloat16 redop=custom(7) root=- peer=- on default stream, enqueued 5.3s ago") !=
        std::string::npos);
  CHECK(text.find("async error ncclInProgress") != std::string::npos);
  CHECK(text.find("cuda runtime 13.0, nccl 2.28.9") != std::string::npos);
  CHECK(text.find("thread 812 blocked in cudaStreamSynchronize (default stream) for 5.3s") != std::string::npos);
  CHECK(text.find("thread 813 blocked in cuStreamSynchronize (stream 0x7f00) for 5.3s") != std::string::npos);
  CHECK(text.find("100000000000") == std::string::npos);  // no raw monotonic ns in text
}
