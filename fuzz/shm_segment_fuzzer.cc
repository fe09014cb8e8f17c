// Fuzz target: the lock-free reader of /dev/shm segments (core/shm/reader.h), which the
// watchdog, `ncclwatch status` and `gc` run on segments written by other processes (any
// process of the user can write anything there).
//
// Input: a segment image (fuzz/shm_image.h).
#include <algorithm>
#include <cstdint>

#include "core/shm/layout.h"
#include "core/shm/reader.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/shm_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ncclwatch::shm;
  using ncclwatch::fuzz::EntryName;
  ncclwatch::fuzz::WriteImage(data, size);
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
