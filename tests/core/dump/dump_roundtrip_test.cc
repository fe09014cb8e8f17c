#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_text.h"
#include "core/dump/dump_writer.h"
#include "core/dump/process_facts.h"
#include "tests/core/analyze/crafted_job.h"
#include "tests/core/dump/read_back.h"
#include "tests/core/dump/temp_dir.h"

using namespace ncclwatch;

namespace {

dump::RankDump FullDump() {
  dump::RankDump d = testing::MakeRankDump(3, 8);
  testing::Issue(d, 12, 11);
  d.incident.trigger = "trigger-file";
  d.verdict.kind = detect::VerdictKind::kStraggler;
  d.verdict.comm_hash = UINT64_MAX;
  d.verdict.seq = 12;
  d.verdict.op = "AllReduce";
  d.verdict.culprit_ranks = {3};
  d.verdict.other_ranks = {0, 1, 2};
  d.verdict.since_ns = 123456789;
  d.verdict.summary = "rank 3 never joined #12 — \"quoted\"";
  d.verdict.partial = true;
  d.environment.nccl_env = {{"NCCL_DEBUG", "INFO"}, {"NCCL_SOCKET_IFNAME", "eth0"}};
  d.environment.cuda_driver_version = 12030;
  d.comms[0].async_error = 5;
  d.comms[0].records[0].peer = 4;
  d.host_syncs.push_back(detect::SyncFacts{42, detect::SyncTarget::kStream, 0xdeadbeef, 1003});
  d.host_syncs.push_back(detect::SyncFacts{43, detect::SyncTarget::kDevice, 0, 1004, 0, detect::SyncApi::kDriver});
  testing::AddBlockedMainThread(d, "load_next_batch");
  d.threads[0].answered = false;
  d.stack_errors = {"thread 7 did not answer"};
  testing::AddPythonStack(d, {{"train.py", 88, "resume_loader"}, {"main.py", 3, "<module>"}});
  return d;
}

}  // namespace

TEST_CASE("a dump survives write and read unchanged", "[dump]") {
  testing::TempDir dir;
  dump::RankDump original = FullDump();
  Result<dump::DumpFiles> written = dump::WriteDump(original, dir.path());
  REQUIRE(written.ok());
  CHECK(written->json_path == dir.File("rank3-node0-1003-inc1.json"));
  CHECK(written->text_path == dir.File("rank3-node0-1003-inc1.txt"));

  const dump::RankDump read = testing::ReadBack(written->json_path);
  CHECK(dump::ToJson(read) == dump::ToJson(original));
  // Spot checks on fields the analyzer depends on, independent of ToJson.
  CHECK(read.verdict.comm_hash == UINT64_MAX);
  CHECK(read.verdict.summary == original.verdict.summary);
  CHECK(read.comms.at(0).records.size() == 12);
  CHECK(read.comms.at(0).records.at(11).complete_ns == 0);
  CHECK(read.comms.at(0).records.at(0).peer == 4);
  CHECK(read.host_syncs.at(0).handle == 0xdeadbeef);
  CHECK(read.host_syncs.at(0).api == detect::SyncApi::kRuntime);
  CHECK(read.host_syncs.at(1).api == detect::SyncApi::kDriver);
  CHECK(read.threads.at(0).frames.at(0).internal);
  CHECK_FALSE(read.threads.at(0).answered);
  CHECK(read.python.threads.at(0).frames.at(0).function == "resume_loader");
  CHECK(read.environment.nccl_env.at("NCCL_SOCKET_IFNAME") == "eth0");
}

TEST_CASE("exit evidence survives write and read: a gone process's dump written on its behalf", "[dump]") {
  testing::TempDir dir;
  dump::RankDump original = FullDump();
  original.process.alive = false;
  original.process.exit = detect::ExitFacts{true, 0, 6, 987654321};
  original.written_by = dump::DumpWriter{2002, "node0", 2};
  original.comms[0].lifecycle = detect::CommLifecycle::kDestroyed;
  original.comms[0].untracked_ops = 5;
  const Result<dump::DumpFiles> written = dump::WriteDump(original, dir.path());
  REQUIRE(written.ok());
  const dump::RankDump read = testing::ReadBack(written->json_path);
  CHECK(read.version == dump::kSchemaVersion);
  CHECK_FALSE(read.process.alive);
  CHECK(read.process.exit.recorded);
  CHECK(read.process.exit.signal == 6);
  CHECK(read.process.exit.exit_ns == 987654321);
  CHECK(read.written_by.pid == 2002);
  CHECK(read.written_by.global_rank == 2);
  CHECK(read.comms.at(0).left());
  CHECK(read.comms.at(0).untracked_ops == 5);
  std::ifstream in(written->text_path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("process GONE: fatal signal 6") != std::string::npos);
  CHECK(text.find("written on its behalf by rank 2 pid 2002") != std::string::npos);
  CHECK(text.find("LEFT") != std::string::npos);
}

TEST_CASE("the attempt and derived communicators survive write and read; older dumps read as unknown", "[dump]") {
  testing::TempDir dir;
  dump::RankDump original = FullDump();
  original.process.attempt = detect::Attempt{1, -1};
  original.comms[0].derived = true;
  const Result<dump::DumpFiles> written = dump::WriteDump(original, dir.path());
  REQUIRE(written.ok());
  const dump::RankDump read = testing::ReadBack(written->json_path);
  CHECK(read.process.attempt == detect::Attempt{1, -1});
  CHECK(read.comms.at(0).derived);

  nlohmann::json old = dump::ToJson(original);  // before shm layout 7
  old["process"].erase("attempt");
  for (auto& c : old["comms"]) c.erase("derived");
  const std::string path = dir.File("old.json");
  std::ofstream(path) << old.dump();
  const dump::RankDump without = testing::ReadBack(path);
  CHECK_FALSE(without.process.attempt.known());
  CHECK_FALSE(without.comms.at(0).derived);

  nlohmann::json bad = dump::ToJson(original);
  bad["process"]["attempt"]["restart"] = -5;
  std::ofstream(dir.File("bad.json")) << bad.dump();
  const Result<dump::RankDump> rejected = dump::ReadDumpFile(dir.File("bad.json"));
  REQUIRE_FALSE(rejected.ok());
  CHECK(rejected.error().message().find("field 'process.attempt' is out of range") != std::string::npos);
}

TEST_CASE("a version 1 dump still reads: its process was alive and left no communicator", "[dump]") {
  testing::TempDir dir;
  nlohmann::json v1 = dump::ToJson(FullDump());
  v1["version"] = 1;
  v1["process"].erase("alive");
  for (auto& c : v1["comms"]) {
    c.erase("left");
    c.erase("untracked_ops");
  }
  const std::string path = dir.File("v1.json");
  std::ofstream(path) << v1.dump();
  const dump::RankDump read = testing::ReadBack(path);
  CHECK(read.version == 1);
  CHECK(read.process.alive);
  CHECK_FALSE(read.process.exit.recorded);
  CHECK(read.written_by.pid == 0);
  CHECK_FALSE(read.comms.at(0).left());
  CHECK(read.comms.at(0).untracked_ops == 0);
}

TEST_CASE("the text companion names the verdict and the stuck collective", "[dump]") {
  testing::TempDir dir;
  Result<dump::DumpFiles> written = dump::WriteDump(FullDump(), dir.path());
  REQUIRE(written.ok());
  std::ifstream in(written->text_path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("verdict straggler") != std::string::npos);
  CHECK(text.find("#12 AllReduce") != std::string::npos);
  CHECK(text.find("resume_loader at train.py:88") != std::string::npos);
}

TEST_CASE("dump file names are sanitized and unique per rank, host, pid and incident", "[dump]") {
  dump::RankDump d = testing::MakeRankDump(7, 8);
  d.process.host = "gpu-node/1 a";
  d.incident.id = "2026:11:21";
  CHECK(dump::DumpFileStem(d) == "rank7-gpu-node_1_a-1007-2026_11_21");
  d.process.global_rank = -1;
  CHECK(dump::DumpFileStem(d).rfind("rankX-", 0) == 0);
}

TEST_CASE("hex comm hashes parse strictly", "[dump]") {
  dump::RankDump d = testing::MakeRankDump(0, 2);
  d.comms[0].comm_hash = 0xabc;
  nlohmann::json doc = dump::ToJson(d);
  CHECK(doc["comms"][0]["comm"] == "0xabc");
  doc["comms"][0]["comm"] = "0xFFFFFFFFFFFFFFFF";
  CHECK(dump::ParseDump(doc.dump()).value().comms[0].comm_hash == UINT64_MAX);
  doc["comms"][0]["comm"] = "0x1f";
  CHECK(dump::ParseDump(doc.dump()).value().comms[0].comm_hash == 0x1fu);
  for (const char* bad : {"1f", "0x", "0x1g", "0x11112222333344445"}) {
    doc["comms"][0]["comm"] = bad;
    CHECK_FALSE(dump::ParseDump(doc.dump()).ok());
  }
}

TEST_CASE("process facts describe this process", "[dump][facts]") {
  dump::RankDump d;
  dump::FillProcessFacts({{"NCCL_NCCLWATCH_TEST_VAR", "on"}}, &d);
  CHECK(d.process.pid == getpid());
  CHECK_FALSE(d.process.host.empty());
  CHECK(d.process.exe.find("dump_test") != std::string::npos);
  REQUIRE_FALSE(d.process.cmdline.empty());
  CHECK(d.process.cmdline[0].find("dump_test") != std::string::npos);
  CHECK(d.environment.nccl_env.at("NCCL_NCCLWATCH_TEST_VAR") == "on");
  CHECK_FALSE(d.environment.kernel_release.empty());
}

TEST_CASE("detection time is stamped on both clocks and in ISO-8601", "[dump][facts]") {
  CHECK(dump::FormatIso8601Utc(1'700'000'000'123'456'789ull) == "2023-11-14T22:13:20.123456789Z");
  dump::Incident incident;
  dump::StampDetectionTime(&incident);
  CHECK(incident.detected_mono_ns > 0);
  CHECK(incident.detected_unix_ns > 1'700'000'000'000'000'000ull);
  CHECK(incident.detected_iso == dump::FormatIso8601Utc(incident.detected_unix_ns));
}

TEST_CASE("the NVIDIA driver version is read from the proc file, or empty without a driver", "[dump][facts]") {
  testing::TempDir dir;
  dir.Write("version",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  545.23.08  Mon Nov  6 23:49:37 UTC 2023\n"
            "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n");
  CHECK(dump::ReadNvidiaDriverVersion(dir.File("version")) == "545.23.08");
  dir.Write("open", "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.154.05  Release Build\n");
  CHECK(dump::ReadNvidiaDriverVersion(dir.File("open")) == "535.154.05");
  CHECK(dump::ReadNvidiaDriverVersion(dir.File("absent")).empty());
}

TEST_CASE("collectives and P2P ops share one records list on disk, in issue order, and split on reading",
          "[dump]") {
  dump::RankDump d = testing::MakeRankDump(0, 2);
  testing::Issue(d, 3, 3);  // AllReduce #1..#3, enqueued 1 ms apart
  detect::RecordFacts send = testing::Comm(d).records[1];
  send.op = "Send";
  send.seq = 1;
  send.peer = 1;
  send.enqueue_ns += 1;  // right after AllReduce #2
  testing::Comm(d).p2p_records.push_back(send);
  const nlohmann::json doc = dump::ToJson(d);
  std::vector<std::string> ops;
  for (const auto& r : doc["comms"][0]["records"]) ops.push_back(r["op"]);
  CHECK(ops == std::vector<std::string>{"AllReduce", "AllReduce", "Send", "AllReduce"});
  const dump::RankDump read = dump::ParseDump(doc.dump()).value();
  CHECK(read.comms[0].records.size() == 3);
  REQUIRE(read.comms[0].p2p_records.size() == 1);
  CHECK(read.comms[0].p2p_records[0].peer == 1);
  CHECK(dump::ToJson(read) == doc);  // written again unchanged
}

TEST_CASE("framework seqs survive write and read; a dump without them reads them as unknown", "[dump]") {
  testing::TempDir dir;
  dump::RankDump original = FullDump();
  for (detect::RecordFacts& r : original.comms.at(0).records) r.framework_seq = r.seq - 1;  // DDP: #N = FR + 1
  original.verdict.framework_seq = 11;
  const Result<dump::DumpFiles> written = dump::WriteDump(original, dir.path());
  REQUIRE(written.ok());
  const dump::RankDump read = testing::ReadBack(written->json_path);
  CHECK(read.verdict.framework_seq == 11);
  CHECK(read.comms.at(0).records.at(11).seq == 12);
  CHECK(read.comms.at(0).records.at(11).framework_seq == 11);
  std::ifstream in(written->text_path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("#12 AllReduce (framework seq 11) culprits") != std::string::npos);  // the verdict
  CHECK(text.find("  #12 AllReduce (framework seq 11) count=") != std::string::npos);  // the record

  // Written by an ncclwatch before shm layout 6: no framework_seq anywhere.
  nlohmann::json old = dump::ToJson(original);
  old["verdict"].erase("framework_seq");
  for (auto& c : old["comms"]) {
    for (auto& r : c["records"]) r.erase("framework_seq");
  }
  const std::string path = dir.File("old.json");
  std::ofstream(path) << old.dump();
  const dump::RankDump without = testing::ReadBack(path);
  CHECK(without.verdict.framework_seq == 0);
  CHECK(without.comms.at(0).records.at(11).framework_seq == 0);
  const std::string old_text = dump::RenderDumpText(without);
  CHECK(old_text.find("framework seq") == std::string::npos);
  CHECK(old_text.find("#12 AllReduce culprits") != std::string::npos);
}
