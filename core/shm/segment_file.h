// Opening a /dev/shm entry that claims to be an ncclwatch segment, trusting nothing about it.
//
// /dev/shm is shared by every user of the machine: another user (or a crashed job) can put
// any file, symlink or FIFO there under the name of one of our segments, and can shrink a
// file it owns while we read it. So a segment is used only when the inode we opened
// (O_NOFOLLOW, O_NONBLOCK: a FIFO never blocks the open) is a regular file owned by our
// effective uid, with permission bits exactly 0600 and a size of at least kHeaderBytes.
//
// Reads go through pread into the caller's buffer, bounded by the size seen at open:
// a file that shrinks under us yields a short read (reported as false), never a SIGBUS.
// We chose pread over mmap because a mapping of a file that shrinks faults on the next
// access, and catching SIGBUS would mean installing a process-wide handler inside the
// job we watch. The cost is a copy of what is read: a poll reads the header, the sync
// slots, the communicator headers and only the ring records it keeps (~100 KiB per
// segment with the watchdog's 64 records per communicator).
#ifndef NCCLWATCH_CORE_SHM_SEGMENT_FILE_H_
#define NCCLWATCH_CORE_SHM_SEGMENT_FILE_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/status/status.h"

namespace ncclwatch::shm {

struct SegmentHeader;  // layout.h

// Why an entry was not used. kIncomplete is what a segment looks like while its owner is
// creating it (size 0, or no magic yet): skipped silently while it is young.
enum class SegmentProblem { kNone, kMissing, kIncomplete, kRejected };

struct SegmentRejection {
  SegmentProblem problem = SegmentProblem::kNone;
  std::string why;  // one line naming the file
  ino_t inode = 0;
  double age_sec = 0;  // since the inode last changed
  // Whether it deserves a warning: rejected, or still incomplete after kIncompleteGraceSec.
  bool Reportable() const;
};

class SegmentFile {
 public:
  // Opens /dev/shm/<entry> read-only and checks its inode as described above; the rejection
  // on failure (status.h: an error of this domain, since callers act on its problem).
  static Result<SegmentFile, SegmentRejection> Open(const std::string& entry);

  SegmentFile(SegmentFile&& other) noexcept;
  SegmentFile& operator=(SegmentFile&&) = delete;
  SegmentFile(const SegmentFile&) = delete;
  ~SegmentFile();

  uint64_t size() const { return size_; }
  ino_t inode() const { return inode_; }
  // Seconds since the inode last changed (ftruncate/fchmod): how long creation has taken.
  double age_sec() const { return age_sec_; }
  // Reads exactly `bytes` at `offset`; false when that lies outside the size seen at open
  // or the file is shorter now.
  bool Read(uint64_t offset, void* out, size_t bytes) const;

 private:
  SegmentFile(int fd, uint64_t size, ino_t inode, double age_sec)
      : fd_(fd), size_(size), inode_(inode), age_sec_(age_sec) {}
  int fd_;
  uint64_t size_;
  ino_t inode_;
  double age_sec_;
};

// A segment whose creation has not finished this long after its last inode change is
// treated as broken (creation takes microseconds: open, fchmod, ftruncate, one header write).
inline constexpr double kIncompleteGraceSec = 2.0;

// Reads the header at offset 0 into *header. Its plain fields never change once the magic is
// set, so two reads in a row must agree on them (up to 16 tries while the owner is still
// writing it); false when they never do or the file is too short.
bool ReadSegmentHeader(const SegmentFile& file, SegmentHeader* header);

// Where warnings about skipped entries go; the default writes "ncclwatch: <line>" to stderr.
// The preload routes them to its log.
using SegmentWarningSink = void (*)(const std::string& line);
void SetSegmentWarningSink(SegmentWarningSink sink);

// Emits `why` through the sink once per (entry, inode): a forged file is reported on the
// first poll that sees it, not on every poll. Remembers at most 4096 files, then goes quiet.
void WarnAboutSegmentOnce(const std::string& entry, ino_t inode, const std::string& why);

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_SEGMENT_FILE_H_
