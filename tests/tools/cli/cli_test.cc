#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/clock/monotonic.h"
#include "core/dump/dump_json.h"
#include "core/shm/process_info.h"
#include "core/shm/reader.h"
#include "core/shm/record_flags.h"
#include "core/shm/segment_writer.h"
#include "tests/core/analyze/crafted_job.h"
#include "tools/cli/status_table.h"
#include "tests/tools/cli/run_process.h"
#include "tests/tools/cli/running_app.h"
#include "tests/core/dump/temp_dir.h"

using namespace ncclwatch;
using nlohmann::json;
using testing::RunProcess;

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitIncident = 3;

testing::ProcessResult Ncclwatch(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
  args.insert(args.begin(), testing::NcclwatchBinary());
  testing::ProcessResult r = RunProcess(args, env);
  REQUIRE_FALSE(r.timed_out);
  return r;
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool IsOneLine(const std::string& text) {
  return !text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) FAIL(std::string(name) + " is not set (run through ctest)");
  return v;
}

void WriteStragglerJob(const std::string& dir) {
  auto job = testing::HealthyJob(8, 0, 4);
  for (auto& d : job) testing::Issue(d, 10, 9);
  testing::Issue(job[3], 9, 9);
  testing::AddPythonStack(job[3], {{"/app/data.py", 40, "skip_batches"}, {"/app/train.py", 9, "main"}});
  testing::WriteJob(job, dir);
}

}  // namespace

TEST_CASE("every subcommand has --help", "[cli]") {
  for (const std::string sub : {"analyze", "status", "trace", "run", "doctor", "gc"}) {
    testing::ProcessResult r = Ncclwatch({sub, "--help"});
    CHECK(r.exit_status == 0);
    CHECK(Has(r.out, "Usage: "));
    CHECK(Has(r.out, sub));
    CHECK(Has(r.out, "Exit status"));
  }
  testing::ProcessResult top = Ncclwatch({"--help"});
  CHECK(top.exit_status == 0);
  CHECK(Has(top.out, "analyze"));
  CHECK(Ncclwatch({"no-such-command"}).exit_status == kExitUsage);
  CHECK(Ncclwatch({}).exit_status == kExitUsage);
}

TEST_CASE("analyze prints one verdict with evidence and exits 3 on a hang", "[cli][analyze]") {
  testing::TempDir dir;
  WriteStragglerJob(dir.path());
  testing::ProcessResult r = Ncclwatch({"analyze", dir.path()});
  CHECK(r.exit_status == kExitIncident);
  CHECK(Has(r.out, "VERDICT: straggler"));
  CHECK(Has(r.out, "communicator 0xfeedface12345678 (8 ranks)"));
  CHECK(Has(r.out, "collective #10 AllReduce"));
  CHECK(Has(r.out, "culprit: rank 3"));
  CHECK(Has(r.out, "skip_batches (/app/data.py:40)"));
  CHECK(Has(r.out, "[data_loading]"));
}

TEST_CASE("analyze --json follows the documented schema", "[cli][analyze]") {
  testing::TempDir dir;
  WriteStragglerJob(dir.path());
  testing::ProcessResult r = Ncclwatch({"analyze", dir.path(), "--json"});
  CHECK(r.exit_status == kExitIncident);
  json report = json::parse(r.out);
  CHECK(report["schema"] == "ncclwatch.analysis");
  CHECK(report["verdict"]["kind"] == "straggler");
  CHECK(report["verdict"]["comm"] == "0xfeedface12345678");
  CHECK(report["verdict"]["seq"] == 10);
  CHECK(report["verdict"]["op"] == "AllReduce");
  CHECK(report["verdict"]["culprit_ranks"] == json::array({3}));
  CHECK(report["hosts"] == json::array({"node0", "node1"}));
  CHECK(report["hints"][0]["id"] == "data_loading");
}

TEST_CASE("analyze exits 0 when nothing is stuck", "[cli][analyze]") {
  testing::TempDir dir;
  testing::WriteJob(testing::HealthyJob(4, 5), dir.path());
  testing::ProcessResult r = Ncclwatch({"analyze", dir.path()});
  CHECK(r.exit_status == 0);
  CHECK(Has(r.out, "VERDICT: none"));
  testing::ProcessResult j = Ncclwatch({"analyze", dir.path(), "--json"});
  CHECK(j.exit_status == 0);
  const json report = json::parse(j.out);
  CHECK(report["verdict"]["kind"] == "none");
  CHECK(report["verdict"]["culprit_ranks"] == json::array());
  CHECK(report["dumps_read"] == 4);
}

TEST_CASE("unusable input gives a one-line error and exit 2, never a crash", "[cli][analyze]") {
  testing::TempDir dir;
  SECTION("missing directory") {
    testing::ProcessResult r = Ncclwatch({"analyze", dir.File("nope")});
    CHECK(r.exit_status == kExitUsage);
    CHECK(IsOneLine(r.err));
    CHECK(Has(r.err, "no such directory"));
  }
  SECTION("no dumps") {
    testing::ProcessResult r = Ncclwatch({"analyze", dir.path()});
    CHECK(r.exit_status == kExitUsage);
    CHECK(IsOneLine(r.err));
    CHECK(Has(r.err, "no dumps"));
  }
  SECTION("truncated") {
    std::string valid = dump::ToJson(testing::MakeRankDump(0, 2)).dump();
    dir.Write("r0.json", valid.substr(0, valid.size() - 10));
    testing::ProcessResult r = Ncclwatch({"analyze", dir.path()});
    CHECK(r.exit_status == kExitUsage);
    CHECK(IsOneLine(r.err));
    CHECK(Has(r.err, "not valid JSON (truncated or corrupt)"));
  }
  SECTION("foreign") {
    dir.Write("trace.json", R"({"traceEvents": []})");
    testing::ProcessResult r = Ncclwatch({"analyze", dir.path()});
    CHECK(r.exit_status == kExitUsage);
    CHECK(IsOneLine(r.err));
    CHECK(Has(r.err, "foreign JSON"));
  }
  SECTION("future version") {
    json future = dump::ToJson(testing::MakeRankDump(0, 2));
    future["version"] = 99;
    dir.Write("r0.json", future.dump());
    testing::ProcessResult r = Ncclwatch({"analyze", dir.path()});
    CHECK(r.exit_status == kExitUsage);
    CHECK(IsOneLine(r.err));
    CHECK(Has(r.err, "dump version 99 is newer"));
  }
  SECTION("hostile bytes") {
    std::string garbage;
    for (int i = 0; i < 70000; ++i) garbage += static_cast<char>((i * 7919) % 256);
    dir.Write("a.json", garbage);
    dir.Write("b.json", std::string(200000, '['));
    dir.Write("c.json", R"({"schema":"ncclwatch.dump","version":1,"incident":{"id":"x"},"process":{"global_rank":1e400}})");
    testing::ProcessResult r = Ncclwatch({"analyze", dir.path()});
    CHECK(r.exit_status == kExitUsage);
    CHECK(IsOneLine(r.err));
  }
}

TEST_CASE("bad files next to good dumps are listed and the analysis goes on", "[cli][analyze]") {
  testing::TempDir dir;
  WriteStragglerJob(dir.path());
  dir.Write("zz-broken.json", "{");
  testing::ProcessResult r = Ncclwatch({"analyze", dir.path()});
  CHECK(r.exit_status == kExitIncident);
  CHECK(Has(r.out, "UNUSABLE FILES"));
  CHECK(Has(r.out, "zz-broken.json: not valid JSON"));
  testing::ProcessResult j = Ncclwatch({"analyze", dir.path(), "--json"});
  CHECK(j.exit_status == kExitIncident);
  const json report = json::parse(j.out);
  CHECK(report["verdict"]["kind"] == "straggler");
  CHECK(report["verdict"]["seq"] == 10);
  CHECK(report["verdict"]["culprit_ranks"] == json::array({3}));
  CHECK(report["dumps_read"] == 8);
  REQUIRE(report["rejected"].size() == 1);
  CHECK(Has(report["rejected"][0].get<std::string>(), "zz-broken.json: not valid JSON"));
}

TEST_CASE("trace writes trace-event JSON with one track per rank and the culprit marked", "[cli][trace]") {
  testing::TempDir dir;
  WriteStragglerJob(dir.path());
  std::string out = dir.File("out/trace.json");
  std::filesystem::create_directories(dir.File("out"));
  testing::ProcessResult r = Ncclwatch({"trace", dir.path(), "-o", out});
  REQUIRE(r.exit_status == 0);
  std::ifstream in(out);
  json trace = json::parse(in);
  std::set<int> tracks;
  bool culprit_marked = false;
  for (const auto& e : trace.at("traceEvents")) {
    CHECK(e.contains("ph"));
    CHECK(e.contains("ts"));
    CHECK(e.contains("pid"));
    CHECK(e.contains("tid"));
    if (e["ph"] == "M" && e["name"] == "process_name") {
      tracks.insert(e["pid"].get<int>());
      if (Has(e["args"]["name"], "CULPRIT")) culprit_marked = Has(e["args"]["name"], "rank 3 ");
    }
  }
  CHECK(tracks.size() == 8);
  CHECK(culprit_marked);
  CHECK(Ncclwatch({"trace", dir.File("nope"), "-o", out}).exit_status == kExitUsage);
  CHECK(Ncclwatch({"trace", dir.path()}).exit_status == kExitUsage);  // -o is required
  // An unwritable output: the error names the user's path, not our temporary beside it.
  const std::string missing_dir = dir.File("no-such-dir/trace.json");
  testing::ProcessResult unwritable = Ncclwatch({"trace", dir.path(), "-o", missing_dir});
  CHECK(unwritable.exit_status == kExitUsage);
  CHECK(Has(unwritable.err, "ncclwatch trace: cannot open the directory of " + missing_dir + ": No such file or directory"));
  CHECK_FALSE(Has(unwritable.err, ".tmp."));
}

// Two unrelated jobs, one directory each: trace draws the run analyze names (--run, the most
// recent first), never a mix of both.
TEST_CASE("trace takes several directories and draws one run of them", "[cli][trace]") {
  testing::TempDir first, second, out_dir;
  WriteStragglerJob(first.path());  // 8 ranks on kWorldComm
  auto later = testing::HealthyJob(2, 0);
  for (auto& d : later) {
    d.comms.front().comm_hash = testing::kWorldComm + 1;  // another launch: another communicator
    d.incident.id = "inc-later";
    d.incident.job_id = "other-job";
    d.incident.detected_unix_ns += 60'000'000'000ull;
    d.process.pid += 5000;
    testing::Issue(d, d.comms.front(), 5, 4);
  }
  testing::WriteJob(later, second.path());
  auto tracks = [](const std::string& file) {
    std::ifstream in(file);
    const json trace = json::parse(in);
    std::set<int> pids;
    for (const auto& e : trace.at("traceEvents")) {
      if (e["ph"] == "M" && e["name"] == "process_name") pids.insert(e["pid"].get<int>());
    }
    return pids.size();
  };
  const std::string out = out_dir.File("trace.json");
  testing::ProcessResult recent = Ncclwatch({"trace", first.path(), second.path(), "-o", out});
  REQUIRE(recent.exit_status == 0);
  CHECK(Has(recent.out, "verdict collective_hang"));
  CHECK(Has(recent.out, "traced run 1 of 2 unrelated runs"));
  CHECK(tracks(out) == 2);
  testing::ProcessResult older = Ncclwatch({"trace", first.path(), second.path(), "--run", "2", "-o", out});
  REQUIRE(older.exit_status == 0);
  CHECK(Has(older.out, "verdict straggler"));
  CHECK(tracks(out) == 8);
  testing::ProcessResult none = Ncclwatch({"trace", first.path(), second.path(), "--run", "3", "-o", out});
  CHECK(none.exit_status == kExitUsage);
  CHECK(Has(none.err, "--run 3: the dumps hold 2 runs"));
}

namespace {

// A copy of the CLI in a bin/ next to a lib/ holding a stand-in libncclwatch.so.
struct InstallTree {
  testing::TempDir root;
  std::string binary = root.File("bin/ncclwatch");
  std::string library = root.File("lib/libncclwatch.so");
  explicit InstallTree(bool with_library) {
    std::filesystem::create_directories(root.File("bin"));
    std::filesystem::copy_file(testing::NcclwatchBinary(), binary);
    if (with_library) {
      std::filesystem::create_directories(root.File("lib"));
      std::filesystem::copy_file(Env("FAKE_PRELOAD_LIB"), library);
    }
  }
};

}  // namespace

TEST_CASE("run preloads the library next to the binary and sets NCCLWATCH_* from options", "[cli][run]") {
  InstallTree tree(true);
  std::string other = Env("FAKE_PRELOAD_LIB");
  testing::ProcessResult r =
      RunProcess({tree.binary, "run", "--stall", "30", "--poll-ms", "250", "--dump-dir", "/tmp/dumps", "--job-id",
                  "j42", "--log-level", "debug", "--", "env"},
                 {{"LD_PRELOAD", other}, {"NCCLWATCH_JOB_ID", "overridden"}});
  CHECK(r.exit_status == 0);
  CHECK(Has(r.out, "LD_PRELOAD=" + tree.library + ":" + other + "\n"));
  CHECK(Has(r.out, "NCCLWATCH_STALL_SEC=30\n"));
  CHECK(Has(r.out, "NCCLWATCH_POLL_MS=250\n"));
  CHECK(Has(r.out, "NCCLWATCH_DUMP_DIR=/tmp/dumps\n"));
  CHECK(Has(r.out, "NCCLWATCH_JOB_ID=j42\n"));
  CHECK(Has(r.out, "NCCLWATCH_LOG_LEVEL=debug\n"));

  testing::ProcessResult plain = RunProcess({tree.binary, "run", "--", "env"}, {{"LD_PRELOAD", ""}});
  CHECK(plain.exit_status == 0);
  CHECK(Has(plain.out, "LD_PRELOAD=" + tree.library + "\n"));
  CHECK_FALSE(Has(plain.out, "NCCLWATCH_STALL_SEC="));

  testing::ProcessResult status = RunProcess({tree.binary, "run", "--", "sh", "-c", "exit 7"});
  CHECK(status.exit_status == 7);
  testing::ProcessResult missing = RunProcess({tree.binary, "run", "--", "/nonexistent/cmd"});
  CHECK(missing.exit_status == 127);
  CHECK(Has(missing.err, "cannot execute /nonexistent/cmd"));
  CHECK(RunProcess({tree.binary, "run", "--stall", "-1", "--", "env"}).exit_status == kExitUsage);
}

TEST_CASE("run refuses to start without the preload library", "[cli][run]") {
  InstallTree tree(false);
  testing::ProcessResult r = RunProcess({tree.binary, "run", "--", "env"});
  CHECK(r.exit_status == kExitUsage);
  CHECK(IsOneLine(r.err));
  CHECK(Has(r.err, "preload library not found"));
}

TEST_CASE("doctor tells a dynamically linked NCCL from a static one", "[cli][doctor]") {
  testing::ProcessResult dynamic = Ncclwatch({"doctor", Env("FAKE_DYNAMIC_APP")}, {{"NCCL_DEBUG", "INFO"}});
  CHECK(dynamic.exit_status == 0);
  CHECK(Has(dynamic.out, "links libnccl.so.2 dynamically: ncclwatch can interpose it"));
  CHECK(Has(dynamic.out, "NCCL_DEBUG=INFO"));
  CHECK(Has(dynamic.out, "kernel:"));
  CHECK(Has(dynamic.out, "driver:"));
  CHECK(Has(dynamic.out, "NCCL:"));
  CHECK(Has(dynamic.out, "CUDA runtime:"));

  testing::ProcessResult fixed = Ncclwatch({"doctor", Env("FAKE_STATIC_APP")});
  CHECK(fixed.exit_status == 0);
  CHECK(Has(fixed.out, "has NCCL linked statically"));
  CHECK(Has(fixed.out, "CANNOT interpose"));

  testing::ProcessResult none = Ncclwatch({"doctor", "/bin/sh"});
  CHECK(Has(none.out, "does not link NCCL"));

  testing::ProcessResult bad = Ncclwatch({"doctor", "/nonexistent/binary"});
  CHECK(bad.exit_status == kExitUsage);
  CHECK(IsOneLine(bad.err));
  CHECK(bad.out.empty());  // the target first: no host report before its error

  testing::ProcessResult json = Ncclwatch({"doctor", Env("FAKE_STATIC_APP"), "--json"});
  CHECK(json.exit_status == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  CHECK(doc["binary"]["nccl"] == "static");
  CHECK(doc["process"].is_null());
  CHECK(Ncclwatch({"doctor", "--pid", "1", "/bin/sh"}).exit_status == kExitUsage);
}

TEST_CASE("doctor --pid reads a running process's libraries and environment", "[cli][doctor]") {
  testing::RunningApp app({Env("FAKE_DYNAMIC_APP"), "wait"},
                         {{"NCCL_P2P_DISABLE", "1"}, {"NCCLWATCH_JOB_ID", "doctorjob"}, {"NCCLWATCH_STALL_SEC", "7"},
                          {"NCCLWATCH_DUMP_DIR", "/tmp/doctor-dumps"}, {"RANK", "3"}, {"WORLD_SIZE", "8"},
                          {"LOCAL_RANK", "1"}});
  // The child has run the dynamic loader once libnccl shows in its maps.
  std::string maps = "/proc/" + std::to_string(app.pid()) + "/maps";
  testing::ProcessResult r;
  for (int attempt = 0; attempt < 50; ++attempt) {
    r = Ncclwatch({"doctor", "--pid", std::to_string(app.pid())});
    if (Has(r.out, "dynamically")) break;
  }
  CHECK(r.exit_status == 0);
  CHECK(Has(r.out, "uses "));
  CHECK(Has(r.out, "libnccl.so.2 dynamically"));
  CHECK(Has(r.out, "NCCL_P2P_DISABLE=1"));
  CHECK(Has(r.out, "libncclwatch.so is NOT loaded"));
  // The process's own ncclwatch settings, as its environment gives them, before the host's.
  CHECK(Has(r.out, "job id:        doctorjob"));
  CHECK(Has(r.out, "stall:         7 s"));
  CHECK(Has(r.out, "dump dir:      /tmp/doctor-dumps"));
  CHECK(Has(r.out, "rank:          3 of 8 (local rank 1)"));
  CHECK(r.out.find("process " + std::to_string(app.pid())) < r.out.find("host ("));
  // Whose calls the one NEEDED copy serves.
  CHECK(Has(r.out, "  serves:      the program's calls, and every caller that binds NCCL's names in the global scope"));

  // --json: the same facts, target apart from host.
  testing::ProcessResult j = Ncclwatch({"doctor", "--pid", std::to_string(app.pid()), "--json"});
  CHECK(j.exit_status == 0);
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  CHECK(doc["schema"] == "ncclwatch.doctor");
  CHECK(doc["process"]["pid"] == app.pid());
  CHECK(doc["process"]["ncclwatch_loaded"] == false);
  REQUIRE(doc["process"]["nccls"].size() == 1);
  CHECK(doc["process"]["nccls"][0]["arrival"] == "needed_by_program");
  CHECK(doc["process"]["settings"]["job_id"] == "doctorjob");
  CHECK(doc["process"]["settings"]["stall_threshold_ns"] == 7'000'000'000ull);
  CHECK(doc["process"]["settings"]["global_rank"] == 3);
  CHECK(doc["process"]["settings"]["dump_dir"] == "/tmp/doctor-dumps");
  CHECK(doc["nccl_env"]["variables"]["NCCL_P2P_DISABLE"] == "1");
  CHECK(doc["host"].contains("kernel"));
  CHECK(doc["binary"].is_null());
  // A target that does not exist: one line, and no host report before it.
  testing::ProcessResult missing = Ncclwatch({"doctor", "--pid", "999999999"});
  CHECK(missing.exit_status == kExitUsage);
  CHECK(missing.out.empty());
  CHECK(IsOneLine(missing.err));
}

namespace {

// A segment of a made-up job published by this test process, removed on destruction.
class PublishedJob {
 public:
  explicit PublishedJob(const std::string& job) {
    shm::SegmentOptions options;
    options.uid = getuid();
    options.job_id = job;
    options.pid = getpid();
    options.process_start_ticks = shm::ProcessStartTicks(getpid());
    options.host = shm::HostName();
    options.rank.global_rank = 0;
    options.rank.local_rank = 0;
    options.rank.world_size = 2;
    options.ring_capacity = 16;
    Result<std::unique_ptr<shm::SegmentWriter>> created = shm::SegmentWriter::Create(options);
    if (!created.ok()) FAIL("cannot create segment: " + created.error().message());
    writer_ = std::move(created).value();
    shm::CommSlot slot = writer_->ClaimCommSlot().value();
    uint64_t now = clock::MonotonicNowNs();
    slot.BeginInit(0x1234, now);
    shm::CommIdentity id;
    id.comm_hash = testing::kWorldComm;
    id.rank = 0;
    id.nranks = 2;
    id.device = 0;
    id.flags = shm::kCommHashKnown;
    slot.PublishIdentity(id);
    slot.FinishInit(true, 0, now);
    shm::OpFingerprint op;
    op.op = shm::Op::kAllReduce;
    op.count = 1024;
    for (int i = 0; i < 3; ++i) {
      shm::RecordRef ref = slot.Append(op, 0, now);
      if (i < 2) slot.MarkCompleted(ref, now);
    }
  }
  ~PublishedJob() {
    if (writer_) writer_->CloseAndUnlink();
  }

 private:
  std::unique_ptr<shm::SegmentWriter> writer_;
};

}  // namespace

TEST_CASE("status shows a live job's communicators from shared memory", "[cli][status]") {
  std::string job = "clitest" + std::to_string(getpid());
  PublishedJob published(job);
  testing::ProcessResult r = Ncclwatch({"status", "--job", job});
  CHECK(r.exit_status == 0);
  CHECK(Has(r.out, "job " + job + ": 1 process on this host"));
  CHECK(Has(r.out, "0xfeedface12345678"));
  CHECK(Has(r.out, "#3 AllReduce"));
  CHECK(Has(r.out, "in-flight"));

  // Into a pipe (as here), --watch prints plain snapshots: no terminal escapes.
  testing::ProcessResult watch = Ncclwatch({"status", "--job", job, "--watch", "--interval", "0.05", "--iterations", "2"});
  CHECK(watch.exit_status == 0);
  CHECK(watch.out.find('\033') == std::string::npos);
  size_t snapshots = 0;
  for (size_t pos = 0; (pos = watch.out.find("job " + job + ": 1 process on this host", pos)) != std::string::npos; ++pos) {
    ++snapshots;
  }
  CHECK(snapshots == 2);

  // --json: one object per snapshot, exact numbers.
  testing::ProcessResult json = Ncclwatch({"status", "--job", job, "--json"});
  CHECK(json.exit_status == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  CHECK(doc["schema"] == "ncclwatch.status");
  REQUIRE(doc["jobs"].size() == 1);
  const nlohmann::json& comm = doc["jobs"][0]["processes"][0]["comms"][0];
  CHECK(comm["comm"] == "0xfeedface12345678");
  CHECK(comm["last_enqueued_seq"] == 3);
  CHECK(comm["last_completed_seq"] == 2);
  CHECK(comm["in_flight_seq"] == 3);
  CHECK(comm["in_flight_op"] == "AllReduce");
  CHECK(comm["in_flight_framework_seq"] == 3);  // three ungrouped collectives: one launch each
  CHECK(doc["jobs"][0]["gone"] == false);

  testing::ProcessResult none = Ncclwatch({"status", "--job", job + "-absent"});
  CHECK(none.exit_status == kExitUsage);
  CHECK(IsOneLine(none.err));
}

TEST_CASE("gc removes the segments of a job's dead ranks and keeps the live ones", "[cli][gc]") {
  const std::string job = "cligc" + std::to_string(getpid());
  PublishedJob live(job);  // a live process keeps the job from being cleaned up by others meanwhile
  const pid_t child = fork();
  if (child == 0) {
    PublishedJob* leaked = new PublishedJob(job);  // dies without removing its segment, like a killed rank
    (void)leaked;
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(shm::ReadJobSnapshot(job).processes.size() == 2);
  testing::ProcessResult r = Ncclwatch({"gc", "--job", job});
  CHECK(r.exit_status == 0);
  CHECK(Has(r.out, "removed 1 stale segment"));
  const shm::JobSnapshot after = shm::ReadJobSnapshot(job);
  REQUIRE(after.processes.size() == 1);
  CHECK(after.processes[0].pid == getpid());
}

namespace {

// Two ranks of one communicator on this host: rank 0 waits in #5 AllReduce since `enqueue_ns`,
// rank 1 has issued only #4 (a straggler), with a 2 s threshold published by both.
shm::JobSnapshot StragglerSnapshot(uint64_t enqueue_ns) {
  shm::JobSnapshot snapshot;
  snapshot.job_id = "straggling";
  for (int rank = 0; rank < 2; ++rank) {
    shm::ProcessView p;
    p.pid = 1000 + rank;
    p.alive = true;
    p.global_rank = rank;
    p.stall_threshold_ns = 2'000'000'000;
    shm::CommView c;
    c.state = shm::CommState::kReady;
    c.comm_hash = 0xabcdef12345;
    c.flags = shm::kCommHashKnown;
    c.rank = rank;
    c.nranks = 2;
    c.init_start_ns = 1;
    c.init_done_ns = 2;
    for (uint64_t seq = 1; seq <= (rank == 0 ? 5u : 4u); ++seq) {
      shm::RecordView r;
      r.op = shm::Op::kAllReduce;
      r.seq = seq;
      r.count = 1024;
      r.enqueue_ns = seq == 5 ? enqueue_ns : 100 * seq;
      r.complete_ns = seq == 5 ? 0 : 100 * seq + 50;
      c.records.push_back(r);
    }
    c.last_enqueued_seq = rank == 0 ? 5 : 4;
    c.last_completed_seq = 4;
    c.last_completed_ns = 450;
    p.comms.push_back(c);
    snapshot.processes.push_back(p);
  }
  return snapshot;
}

}  // namespace

TEST_CASE("status marks the culprit and the waiters of an incident", "[cli][status]") {
  const uint64_t enqueue_ns = 1'000'000'000;
  const shm::JobSnapshot snapshot = StragglerSnapshot(enqueue_ns);

  SECTION("within the threshold: no incident") {
    const std::string table = tools::RenderStatusTable(snapshot, enqueue_ns + 1'000'000'000);
    CHECK_FALSE(Has(table, "culprit:"));
    CHECK_FALSE(Has(table, "incidents"));
    CHECK(tools::StatusJson(snapshot, enqueue_ns + 1'000'000'000)["incidents"].empty());
  }
  SECTION("past the job's own threshold: rank 1 is the straggler") {
    const uint64_t now = enqueue_ns + 3'000'000'000;
    const std::string table = tools::RenderStatusTable(snapshot, now);
    INFO(table);
    CHECK(Has(table, "job straggling: 2 processes on this host"));
    std::vector<std::string> rows;
    for (size_t start = 0, end; (end = table.find('\n', start)) != std::string::npos; start = end + 1) {
      rows.push_back(table.substr(start, end - start));
    }
    auto row_of = [&](const std::string& pid) {
      for (const auto& row : rows) {
        if (row.find(" " + pid + " ") != std::string::npos) return row;
      }
      return std::string();
    };
    CHECK(Has(row_of("1001"), "culprit:straggler,idle"));
    CHECK(Has(row_of("1000"), "waits:straggler,in-flight"));
    CHECK(Has(table, "incidents, as the watchdog judges them (threshold 2.0"));
    CHECK(Has(table, "  straggler: "));

    const nlohmann::json doc = tools::StatusJson(snapshot, now);
    CHECK(doc["stall_threshold_ns"] == 2'000'000'000ull);
    REQUIRE(doc["incidents"].size() == 1);
    CHECK(doc["incidents"][0]["kind"] == "straggler");
    CHECK(doc["incidents"][0]["culprit_ranks"] == nlohmann::json::array({1}));
    CHECK(doc["incidents"][0]["seq"] == 5);
    CHECK(doc["processes"][1]["comms"][0]["incident"] == nlohmann::json({{"role", "culprit"}, {"kind", "straggler"}}));
    CHECK(doc["processes"][0]["comms"][0]["incident"] == nlohmann::json({{"role", "waits"}, {"kind", "straggler"}}));
  }
}

TEST_CASE("status shows a pending point-to-point op when no collective is in flight", "[cli][status]") {
  shm::JobSnapshot snapshot = StragglerSnapshot(1'000'000'000);
  shm::CommView& c = snapshot.processes[1].comms[0];  // rank 1: every collective complete
  shm::RecordView recv;
  recv.op = shm::Op::kRecv;
  recv.seq = 3;
  recv.root_or_peer = 0;
  recv.enqueue_ns = 2'000'000'000;
  c.records.push_back(recv);
  shm::RecordView failed = recv;  // a failed send never completes: not shown as in flight
  failed.op = shm::Op::kSend;
  failed.enqueue_ns = 1'500'000'000;
  failed.flags = shm::kRecordFailed;
  c.records.push_back(failed);
  const std::string table = tools::RenderStatusTable(snapshot, 2'500'000'000);
  INFO(table);
  CHECK(Has(table, "Recv from 0 (#3)"));
  CHECK_FALSE(Has(table, "Send to 0"));
  const nlohmann::json doc = tools::StatusJson(snapshot, 2'500'000'000);
  const nlohmann::json& p2p = doc["processes"][1]["comms"][0]["p2p_in_flight"];
  CHECK(p2p["op"] == "Recv");
  CHECK(p2p["peer"] == 0);
  CHECK(p2p["seq"] == 3);
  CHECK(p2p["in_flight_ns"] == 500'000'000);
  CHECK(doc["processes"][1]["comms"][0]["state"] == "ready");
}
