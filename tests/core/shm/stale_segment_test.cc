#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include "core/shm/reader.h"
#include "core/shm/segment_gc.h"
#include "core/shm/segment_file.h"
#include "segment_test_util.h"

namespace ncclwatch::shm {
namespace {

using testing::OptionsForThisProcess;
using testing::ScopedSegment;
using testing::UniqueJobId;

// A child creates its segment and dies without removing it, as a crashed rank would.
pid_t SpawnCrashingWriter(const std::string& job) {
  const pid_t child = fork();
  if (child == 0) {
    auto writer = SegmentWriter::Create(OptionsForThisProcess(job, 16)).value_or(nullptr);
    _exit(writer ? 0 : 1);
  }
  return child;
}

TEST_CASE("a dead owner's segment reads as stale and is removed", "[stale]") {
  const std::string job = UniqueJobId("stale");
  ScopedSegment live(job, 16);
  const pid_t child = SpawnCrashingWriter(job);
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  JobSnapshot snap = ReadJobSnapshot(job);
  REQUIRE(snap.processes.size() == 2);
  int stale = 0;
  for (const ProcessView& p : snap.processes) {
    if (p.pid == child) {
      CHECK(p.stale);
      CHECK_FALSE(p.alive);
      ++stale;
    } else {
      CHECK(p.alive);
    }
  }
  CHECK(stale == 1);

  CHECK(RemoveStaleSegments(job) == 1);
  snap = ReadJobSnapshot(job);
  REQUIRE(snap.processes.size() == 1);
  CHECK(snap.processes[0].pid == getpid());
  CHECK(RemoveStaleSegments(job) == 0);
}

// Segments under a uid no real process uses, so that the watchdogs of jobs running
// concurrently (which clean up dead jobs of the real uid) never touch this test's jobs.
constexpr uid_t kPrivateUid = 4000000123u;

int SpawnAndReapCrashingWriter(const std::string& job) {
  const pid_t child = fork();
  if (child == 0) {
    SegmentOptions options = OptionsForThisProcess(job, 16);
    options.uid = kPrivateUid;
    auto writer = SegmentWriter::Create(options).value_or(nullptr);
    _exit(writer ? 0 : 1);
  }
  int status = 0;
  if (child <= 0 || waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A child of this job that records how it leaves, as the preload does at exit, then exits.
int SpawnAndReapExitingWriter(const std::string& job, ExitHow how, int value) {
  const pid_t child = fork();
  if (child == 0) {
    SegmentOptions options = OptionsForThisProcess(job, 16);
    options.uid = kPrivateUid;
    options.pid = getpid();
    options.process_start_ticks = ProcessStartTicks(getpid());
    auto writer = SegmentWriter::Create(options).value_or(nullptr);
    if (!writer) _exit(1);
    writer->RecordExit(how, value);
    writer->RecordExit(ExitHow::kStatus, 42);  // the first record wins
    _exit(0);
  }
  int status = 0;
  if (child <= 0 || waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_CASE("an exited process's segment stays with how it left; a crashed one has no record", "[stale][exit]") {
  const std::string job = UniqueJobId("exitevidence");
  REQUIRE(SpawnAndReapExitingWriter(job, ExitHow::kStatus, 3) == 0);
  REQUIRE(SpawnAndReapExitingWriter(job, ExitHow::kSignal, 6) == 0);
  REQUIRE(SpawnAndReapCrashingWriter(job) == 0);
  SegmentOptions live_options = OptionsForThisProcess(job, 16);
  live_options.uid = kPrivateUid;
  auto live = SegmentWriter::Create(live_options).value_or(nullptr);
  REQUIRE(live);

  const JobSnapshot snap = ReadJobSnapshot(job, kPrivateUid);
  REQUIRE(snap.processes.size() == 4);
  int by_status = 0, by_signal = 0, crashed = 0;
  for (const ProcessView& p : snap.processes) {
    if (p.pid == getpid()) {
      CHECK(p.alive);
      CHECK_FALSE(p.exited);
      continue;
    }
    CHECK_FALSE(p.alive);
    if (!p.exited) {
      CHECK(p.exit_how == ExitHow::kNone);
      ++crashed;
    } else if (p.exit_how == ExitHow::kStatus) {
      CHECK(p.exit_status == 3);
      CHECK(p.exit_ns > 0);
      ++by_status;
    } else if (p.exit_how == ExitHow::kSignal) {
      CHECK(p.exit_signal == 6);
      ++by_signal;
    }
  }
  CHECK((by_status == 1 && by_signal == 1 && crashed == 1));

  CHECK(RemoveJobIfEnded(job, kPrivateUid) == 0);  // we live: every segment stays
  CHECK(ReadJobSnapshot(job, kPrivateUid).processes.size() == 4);
  live->RecordExit(ExitHow::kStatus, 0);  // our pid still runs, but we left
  CHECK(RemoveJobIfEnded(job, kPrivateUid) == 4);
  CHECK(ReadJobSnapshot(job, kPrivateUid).processes.empty());
}

TEST_CASE("a segment of another layout version is refused, naming its version", "[stale][exit]") {
  const std::string job = UniqueJobId("oldlayout");
  SegmentOptions options = OptionsForThisProcess(job, 16);
  options.uid = kPrivateUid;
  auto writer = SegmentWriter::Create(options).value_or(nullptr);
  REQUIRE(writer);
  static std::string warning;
  SetSegmentWarningSink([](const std::string& line) { warning = line; });
  writer->header().layout_version = kLayoutVersion - 1;
  CHECK(ReadJobSnapshot(job, kPrivateUid).processes.empty());
  CHECK(warning.find("layout version " + std::to_string(kLayoutVersion - 1)) != std::string::npos);
  SetSegmentWarningSink(nullptr);
  writer->CloseAndUnlink();

  // What an older ncclwatch's killed rank left is still collected.
  const std::string old_job = UniqueJobId("oldlayoutdead");
  const pid_t child = fork();
  if (child == 0) {
    SegmentOptions dead_options = OptionsForThisProcess(old_job, 16);
    dead_options.uid = kPrivateUid;
    dead_options.pid = getpid();
    dead_options.process_start_ticks = ProcessStartTicks(getpid());
    auto dead = SegmentWriter::Create(dead_options).value_or(nullptr);
    if (dead) dead->header().layout_version = kLayoutVersion - 1;
    _exit(dead ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  SetSegmentWarningSink([](const std::string&) {});
  CHECK(RemoveDeadJobs("", kPrivateUid) == 1);
  SetSegmentWarningSink(nullptr);
}

TEST_CASE("dead jobs are removed whole; jobs with a live process and the kept job stay", "[stale]") {
  const std::string dead_job = UniqueJobId("deadjob");
  const std::string mixed_job = UniqueJobId("mixedjob");
  const std::string own_job = UniqueJobId("ownjob");
  REQUIRE(SpawnAndReapCrashingWriter(dead_job) == 0);
  REQUIRE(SpawnAndReapCrashingWriter(dead_job) == 0);
  REQUIRE(SpawnAndReapCrashingWriter(own_job) == 0);
  SegmentOptions live_options = OptionsForThisProcess(mixed_job, 16);
  live_options.uid = kPrivateUid;
  auto live = SegmentWriter::Create(live_options).value_or(nullptr);
  REQUIRE(live);
  REQUIRE(SpawnAndReapCrashingWriter(mixed_job) == 0);

  CHECK(RemoveDeadJobs(own_job, kPrivateUid) == 2);
  CHECK(ReadJobSnapshot(dead_job, kPrivateUid).processes.empty());
  CHECK(ReadJobSnapshot(mixed_job, kPrivateUid).processes.size() == 2);  // its live process needs the dead one
  CHECK(ReadJobSnapshot(own_job, kPrivateUid).processes.size() == 1);
  CHECK(RemoveStaleSegments(mixed_job, kPrivateUid) == 1);
  CHECK(RemoveStaleSegments(own_job, kPrivateUid) == 1);
  live->CloseAndUnlink();
  CHECK(ListJobIds(kPrivateUid).empty());
}

TEST_CASE("a closed segment disappears from its job", "[stale]") {
  const std::string job = UniqueJobId("closed");
  {
    ScopedSegment segment(job, 16);
    CHECK(ReadJobSnapshot(job).processes.size() == 1);
    CHECK(ListJobIds().size() >= 1);
  }
  CHECK(ReadJobSnapshot(job).processes.empty());
}

}  // namespace
}  // namespace ncclwatch::shm
