// Fuzz target: the lock-free reader of /dev/shm segments (core/shm/reader.h), which the
// watchdog, `ncclwatch status` and `gc` run on segments written by other processes (any
// process of the user can write anything there).
//
// Input: the first bytes of a segment image. It is written to a /dev/shm entry of this
// process whose size is the larger of the input and the size the image's header claims
// (capped at kMaxImageBytes), the rest reading as zeros: a real segment is mostly zeros, so
// seeds stay small (fuzz/make_seeds writes them from a real SegmentWriter).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/shm/layout.h"
#include "core/shm/reader.h"
#include "fuzz/fuzz_check.h"

namespace {

// The largest real segment (ring capacity 65536) is about 49 MiB.
constexpr uint64_t kMaxImageBytes = 64ull << 20;

// Not "ncclwatch*": tests/leak_check.sh must not mistake it for a leaked segment. Never
// destroyed: the exit handler reads it after static destructors registered later have run.
const std::string& EntryName() {
  static const std::string* name = [] {
    auto* n = new std::string("nwfuzz-segment." + std::to_string(getpid()));
    std::atexit([] { shm_unlink(("/" + EntryName()).c_str()); });
    return n;
  }();
  return *name;
}

uint64_t ClaimedSize(const uint8_t* data, size_t size) {
  uint64_t claimed = 0;
  constexpr size_t kOffset = offsetof(ncclwatch::shm::SegmentHeader, segment_bytes);
  if (size >= kOffset + sizeof claimed) std::memcpy(&claimed, data + kOffset, sizeof claimed);
  return claimed <= kMaxImageBytes ? claimed : 0;
}

void WriteImage(const uint8_t* data, size_t size) {
  const int fd = shm_open(("/" + EntryName()).c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FUZZ_CHECK(fd >= 0);
  const uint64_t bytes = std::max<uint64_t>(size, ClaimedSize(data, size));
  FUZZ_CHECK(ftruncate(fd, static_cast<off_t>(bytes)) == 0);
  for (size_t done = 0; done < size;) {
    const ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    FUZZ_CHECK(n > 0);
    done += static_cast<size_t>(n);
  }
  close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ncclwatch::shm;
  WriteImage(data, size);
  for (size_t max_records : {SIZE_MAX, size_t{3}}) {
    const auto view = ReadSegment(EntryName(), max_records);
    if (!view) continue;
    FUZZ_CHECK(view->comms.size() <= kMaxComms && view->sync_slots.size() <= kMaxSyncSlots);
    for (const CommView& comm : view->comms) {
      FUZZ_CHECK(comm.peers.size() <= kMaxPeers);
      FUZZ_CHECK(comm.records.size() <= std::min<uint64_t>(view->ring_capacity, max_records));
    }
    FUZZ_CHECK(view->host.size() <= kHostBytes && view->job_id.size() <= kJobIdBytes);
  }
  return 0;
}
