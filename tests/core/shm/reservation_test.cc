// layout.h "Reservation": what a segment holds of /dev/shm, and that a full /dev/shm fails our
// reservation (an error, one unwatched communicator) instead of faulting.
#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/shm/reader.h"
#include "segment_test_util.h"

namespace ncclwatch::shm {
namespace {

using testing::OptionsForThisProcess;
using testing::ScopedSegment;
using testing::UniqueJobId;

// Bytes /dev/shm backs for the segment (tmpfs counts fallocated pages in st_blocks).
uint64_t PagesOf(uint64_t bytes) { return (bytes + 4095) / 4096 * 4096; }

uint64_t BackedBytes(const SegmentWriter& writer) {
  struct stat st {};
  if (stat(("/dev/shm" + writer.name()).c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

TEST_CASE("a new segment backs its header, sync slots and one chunk of comm slots only", "[reservation]") {
  ScopedSegment segment(UniqueJobId("reserve-new"), kDefaultRingCapacity);
  const SegmentGeometry g = ComputeGeometry(kDefaultRingCapacity);
  CHECK(segment->header().comms_reserved.load() == kCommSlotsPerReservation);
  CHECK(BackedBytes(*segment) == PagesOf(g.CommSlotOffset(kCommSlotsPerReservation)));
  CHECK(g.CommSlotOffset(kCommSlotsPerReservation) < (300u << 10));  // 0.27 MiB, not 17 MiB
}

TEST_CASE("claims past the reserved chunk reserve the next one; 16 communicators stay under 2 MiB",
          "[reservation]") {
  ScopedSegment segment(UniqueJobId("reserve-grow"), kDefaultRingCapacity);
  const SegmentGeometry g = ComputeGeometry(kDefaultRingCapacity);
  for (uint32_t i = 0; i < 16; ++i) {
    REQUIRE(segment->ClaimCommSlot().ok());
    const uint32_t chunks = i / kCommSlotsPerReservation + 1;
    CHECK(segment->header().comms_reserved.load() == chunks * kCommSlotsPerReservation);
  }
  CHECK(BackedBytes(*segment) == PagesOf(g.CommSlotOffset(16)));
  CHECK(BackedBytes(*segment) <= (2u << 20));
  const std::optional<ProcessView> view = ReadSegment(segment->name().substr(1));
  REQUIRE(view.has_value());
  CHECK(view->comms_reserved == 16);
}

// Runs `body` in a child with a private mount namespace whose /dev/shm is a tmpfs of
// `kib` KiB; the child's exit status is body's result (0 passed), 128+signal if it died.
int InSmallShm(int kib, int (*body)()) {
  const pid_t child = fork();
  if (child == 0) {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) _exit(90);
    const std::string options = "size=" + std::to_string(kib) + "k,mode=1777";
    if (mount("tmpfs", "/dev/shm", "tmpfs", 0, options.c_str()) != 0) _exit(91);
    _exit(body());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// 64 KiB cannot hold the header, sync slots and first chunk: creation fails with ENOSPC.
int CreateInTinyShm() {
  const auto writer = SegmentWriter::Create(OptionsForThisProcess(UniqueJobId("tiny"), kDefaultRingCapacity));
  if (writer.ok()) return 1;
  if (writer.error().message().find(std::strerror(ENOSPC)) == std::string::npos) return 2;
  // Nothing is left behind: the name was removed with the failure.
  if (!ListJobIds().empty()) return 3;
  return 0;
}

// 420 KiB, of which a reservation leaves an eighth (52 KiB) free: the first chunk (277 KiB with
// the header) fits; the second (269 KiB) does not, one more slot (68 KiB) still does, and the
// one after it does not. Every record of every slot we were given is
// then written: a slot we use is always backed, so nothing faults.
int GrowInSmallShm() {
  auto writer = SegmentWriter::Create(OptionsForThisProcess(UniqueJobId("small"), kDefaultRingCapacity)).value_or(nullptr);
  if (!writer) return 10;
  std::vector<CommSlot> slots;
  for (uint32_t i = 0; i < kCommSlotsPerReservation + 1; ++i) {
    Result<CommSlot> slot = writer->ClaimCommSlot();
    if (!slot.ok() || !slot->valid()) return 11 + static_cast<int>(i);
    slots.push_back(*slot);
  }
  if (writer->header().comms_reserved.load() != kCommSlotsPerReservation + 1) return 20;
  const Result<CommSlot> refused = writer->ClaimCommSlot();
  if (refused.ok()) return 21;
  if (refused.error().message().find(std::strerror(ENOSPC)) == std::string::npos) return 22;
  if (refused.error().error_number() != ENOSPC) return 24;
  if (writer->header().comms_unwatched.load() != 1) return 23;
  for (CommSlot& slot : slots) {
    slot.BeginInit(0, MonotonicNowNs());
    OpFingerprint op;
    op.op = Op::kAllReduce;
    op.count = 1;
    for (uint32_t r = 0; r < kDefaultRingCapacity; ++r) slot.Append(op, 0, MonotonicNowNs());
  }
  const std::optional<ProcessView> view = ReadSegment(writer->name().substr(1));
  if (!view || view->comms.size() != slots.size() || view->comms_unwatched != 1) return 24;
  writer->CloseAndUnlink();
  return 0;
}

TEST_CASE("a full /dev/shm fails our reservation, never the process", "[reservation]") {
  if (geteuid() != 0) FAIL("needs root for a private mount namespace (the suite runs as root)");
  CHECK(InSmallShm(64, CreateInTinyShm) == 0);
  CHECK(InSmallShm(420, GrowInSmallShm) == 0);
}

}  // namespace
}  // namespace ncclwatch::shm
