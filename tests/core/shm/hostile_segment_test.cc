// Files other users, other jobs or crashed processes leave in /dev/shm under our names are
// never trusted: wrong mode, wrong type, truncated, or squatting the name we want.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/shm/process_info.h"
#include "core/shm/reader.h"
#include "core/shm/segment_file.h"
#include "core/shm/segment_name.h"
#include "segment_test_util.h"

namespace ncclwatch::shm {
namespace {

using testing::OptionsForThisProcess;
using testing::ScopedSegment;
using testing::UniqueJobId;

std::vector<std::string>* g_warnings = nullptr;
void CollectWarning(const std::string& line) { g_warnings->push_back(line); }

// Routes segment warnings into a list for the scope of one test. Only lines about `job`
// count: tests running at the same time leave their own segments in /dev/shm.
class CapturedWarnings {
 public:
  explicit CapturedWarnings(std::string job) : job_(std::move(job)) {
    g_warnings = &lines_;
    SetSegmentWarningSink(&CollectWarning);
  }
  ~CapturedWarnings() { SetSegmentWarningSink(nullptr); }
  std::vector<std::string> lines() const {
    std::vector<std::string> ours;
    for (const std::string& line : lines_) {
      if (line.find("." + job_ + ".") != std::string::npos) ours.push_back(line);
    }
    return ours;
  }

 private:
  std::string job_;
  std::vector<std::string> lines_;
};

std::string PathOf(const SegmentWriter& writer) { return "/dev/shm" + writer.name(); }

TEST_CASE("a segment with group or other permission bits is ignored, with one warning", "[hostile]") {
  const std::string job = UniqueJobId("mode");
  ScopedSegment segment(job, 16);
  CapturedWarnings warnings(job);
  REQUIRE(ReadJobSnapshot(job).processes.size() == 1);  // the control: as created, it is read
  REQUIRE(chmod(PathOf(*segment).c_str(), 0644) == 0);
  CHECK(ReadJobSnapshot(job).processes.empty());
  CHECK(ReadJobSnapshot(job).processes.empty());
  const std::vector<std::string> jobs = ListJobIds();
  CHECK(std::find(jobs.begin(), jobs.end(), job) == jobs.end());
  REQUIRE(warnings.lines().size() == 1);
  CHECK(warnings.lines()[0].find(PathOf(*segment)) != std::string::npos);
  CHECK(warnings.lines()[0].find("mode 0644") != std::string::npos);
}

TEST_CASE("a segment shorter than its header declares is ignored without a fault", "[hostile]") {
  const std::string job = UniqueJobId("short");
  ScopedSegment segment(job, 1024);
  segment->ClaimCommSlot()->BeginInit(1, 1);
  CapturedWarnings warnings(job);
  REQUIRE(ReadJobSnapshot(job).processes.size() == 1);
  // The writer's own mapping now extends past the end of the file: only its reads would fault.
  REQUIRE(truncate(PathOf(*segment).c_str(), static_cast<off_t>(segment->header().segment_bytes / 2)) == 0);
  CHECK(ReadJobSnapshot(job).processes.empty());
  REQUIRE(warnings.lines().size() == 1);
  CHECK(warnings.lines()[0].find("header declares") != std::string::npos);
}

TEST_CASE("symlinks and FIFOs under a segment name are ignored and never block", "[hostile]") {
  const std::string job = UniqueJobId("special");
  const std::string target = "/dev/shm/" + JobEntryPrefix(getuid(), job) + "target";
  ScopedSegment real(job, 16);
  const std::string link = "/dev/shm" + SegmentName(getuid(), job, 1, 42);
  const std::string fifo = "/dev/shm" + SegmentName(getuid(), job, 2, 42);
  REQUIRE(symlink(PathOf(*real).c_str(), link.c_str()) == 0);
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CapturedWarnings warnings(job);
  const JobSnapshot snap = ReadJobSnapshot(job);
  CHECK(snap.processes.size() == 1);  // only the real one
  CHECK(warnings.lines().size() == 2);
  unlink(link.c_str());
  unlink(fifo.c_str());
}

TEST_CASE("a name squatted before we start makes the writer take another one", "[hostile]") {
  const std::string job = UniqueJobId("squat");
  const SegmentOptions options = OptionsForThisProcess(job, 16);
  const std::string squatted = "/dev/shm" + SegmentName(options.uid, job, options.pid, options.process_start_ticks);
  const int fd = open(squatted.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  close(fd);
  CapturedWarnings warnings(job);
  {
    ScopedSegment segment(job, 16);
    CHECK(PathOf(*segment) == "/dev/shm" + SegmentName(options.uid, job, options.pid, options.process_start_ticks, 1));
    struct stat st {};
    REQUIRE(stat(PathOf(*segment).c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    const JobSnapshot snap = ReadJobSnapshot(job);
    REQUIRE(snap.processes.size() == 1);
    CHECK(snap.processes[0].pid == getpid());
    const std::vector<std::string> jobs = ListJobIds();
    CHECK(std::find(jobs.begin(), jobs.end(), job) != jobs.end());
  }
  unlink(squatted.c_str());
}

TEST_CASE("a fresh segment still being created is skipped silently", "[hostile]") {
  const std::string job = UniqueJobId("young");
  const std::string path = "/dev/shm" + SegmentName(getuid(), job, getpid(), 7);
  const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  close(fd);
  CapturedWarnings warnings(job);
  CHECK(ReadJobSnapshot(job).processes.empty());
  CHECK(warnings.lines().empty());
  unlink(path.c_str());
}

TEST_CASE("a segment naming a live process that does not map it is no process's segment", "[hostile]") {
  // A frozen copy of a rank's segment put next to an unrelated live process of the same user:
  // its pid and start time check out, but the process never mapped it.
  const pid_t sleeper = fork();
  REQUIRE(sleeper >= 0);
  if (sleeper == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  struct Reap {
    pid_t pid;
    ~Reap() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reap{sleeper};
  // Wait until the child runs `sleep` (a forked copy of this test would map our segments).
  for (int i = 0; i < 200; ++i) {
    char exe[256] = {};
    const std::string link = "/proc/" + std::to_string(sleeper) + "/exe";
    if (readlink(link.c_str(), exe, sizeof exe - 1) > 0 && std::string(exe).find("sleep") != std::string::npos) break;
    usleep(10'000);
  }
  const std::string job = UniqueJobId("unmapped");
  CapturedWarnings warnings(job);
  ScopedSegment own(job, 16);  // the control: mapped by this process, which it names
  SegmentOptions forged = OptionsForThisProcess(job, 16);
  forged.pid = sleeper;
  forged.process_start_ticks = ProcessStartTicks(sleeper);
  Result<std::unique_ptr<SegmentWriter>> copy = SegmentWriter::Create(forged);
  REQUIRE(copy.ok());
  const JobSnapshot snap = ReadJobSnapshot(job);
  REQUIRE(snap.processes.size() == 1);
  CHECK(snap.processes[0].pid == getpid());
  CHECK(snap.processes[0].os.state != 0);  // a live process's state is read
  const std::vector<std::string> lines = warnings.lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("does not map it") != std::string::npos);
  (*copy)->CloseAndUnlink();
}

}  // namespace
}  // namespace ncclwatch::shm
