// A segment image written to a /dev/shm entry of this process, for the fuzz targets that read
// segments (shm_segment: the reader; exporter_metrics: the reader and the exporter's metrics).
//
// Input: the first bytes of a segment image. It is written to a /dev/shm entry of this
// process whose size is the larger of the input and the size the image's header claims
// (capped at kMaxImageBytes), the rest reading as zeros: a real segment is mostly zeros, so
// seeds stay small (fuzz/make_seeds writes them from a real SegmentWriter).
#ifndef NCCLWATCH_FUZZ_SHM_IMAGE_H_
#define NCCLWATCH_FUZZ_SHM_IMAGE_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/shm/layout.h"
#include "fuzz/fuzz_check.h"

namespace ncclwatch::fuzz {

// The largest real segment (ring capacity 65536) is about 49 MiB.
constexpr uint64_t kMaxImageBytes = 64ull << 20;

// Not "ncclwatch*": tests/leak_check.sh must not mistake it for a leaked segment. Never
// destroyed: the exit handler reads it after static destructors registered later have run.
inline const std::string& EntryName() {
  static const std::string* name = [] {
    auto* n = new std::string("nwfuzz-segment." + std::to_string(getpid()));
    std::atexit([] { shm_unlink(("/" + EntryName()).c_str()); });
    return n;
  }();
  return *name;
}

inline uint64_t ClaimedSize(const uint8_t* data, size_t size) {
  uint64_t claimed = 0;
  constexpr size_t kOffset = offsetof(ncclwatch::shm::SegmentHeader, segment_bytes);
  if (size >= kOffset + sizeof claimed) std::memcpy(&claimed, data + kOffset, sizeof claimed);
  return claimed <= kMaxImageBytes ? claimed : 0;
}

inline void WriteImage(const uint8_t* data, size_t size) {
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

}  // namespace ncclwatch::fuzz

#endif  // NCCLWATCH_FUZZ_SHM_IMAGE_H_
