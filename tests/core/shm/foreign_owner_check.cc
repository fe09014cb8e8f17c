// A segment forged by another uid under the exact name of a live segment of ours is ignored,
// with one warning naming it. Needs root (to create a file owned by uid 65534): otherwise
// exits 77, which ctest reports as skipped.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/shm/reader.h"
#include "core/shm/segment_gc.h"
#include "core/shm/segment_file.h"
#include "core/shm/process_info.h"
#include "core/shm/segment_writer.h"

using namespace ncclwatch::shm;

namespace {

constexpr uid_t kOtherUid = 65534;  // nobody
std::vector<std::string> g_warnings;
void Collect(const std::string& line) { g_warnings.push_back(line); }

int Fail(const char* what) {
  std::printf("FAIL: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  if (geteuid() != 0) {
    std::printf("SKIP: creating a file owned by another uid needs root\n");
    return 77;
  }
  SetSegmentWarningSink(&Collect);
  SegmentOptions options;
  options.uid = getuid();
  options.job_id = "test-foreign-" + std::to_string(getpid());
  options.pid = getpid();
  options.process_start_ticks = ProcessStartTicks(getpid());
  options.host = HostName();
  options.ring_capacity = 16;
  ncclwatch::Result<std::unique_ptr<SegmentWriter>> created = SegmentWriter::Create(options);
  if (!created.ok()) return Fail(created.error().message().c_str());
  std::unique_ptr<SegmentWriter> writer = std::move(created).value();
  int rc = 0;
  if (ReadJobSnapshot(options.job_id).processes.size() != 1) rc = Fail("control: our own segment is read");
  const std::string path = "/dev/shm" + writer->name();
  if (chown(path.c_str(), kOtherUid, kOtherUid) != 0) rc = Fail("chown to 65534");
  for (int poll = 0; poll < 3; ++poll) {
    if (!ReadJobSnapshot(options.job_id).processes.empty()) rc = Fail("a segment owned by uid 65534 was read");
  }
  for (const std::string& job : ListJobIds()) {
    if (job == options.job_id) rc = Fail("a segment owned by uid 65534 is listed");
  }
  if (RemoveStaleSegments(options.job_id) != 0) rc = Fail("gc removed a file of another uid");
  // Other tests may run at the same time: only warnings about this job's file count.
  std::vector<std::string> ours;
  for (const std::string& line : g_warnings) {
    if (line.find(path) != std::string::npos) ours.push_back(line);
  }
  if (ours.size() != 1 || ours[0].find("owned by uid 65534") == std::string::npos) {
    rc = Fail("exactly one warning naming the file and its owner");
  }
  for (const std::string& line : ours) std::printf("warning: %s\n", line.c_str());
  writer->CloseAndUnlink();
  std::printf("%s\n", rc == 0 ? "PASS" : "FAILED");
  return rc;
}
