// Counts the dumps and incidents in a dump directory for `ncclwatch exporter`: the segments
// hold no incident history, the dumps do. Each file is parsed once (by its device, inode,
// size and modification time) with the checked dump reader; a file that is not a valid dump
// is counted in rejected_files and never again parsed while unchanged.
#ifndef NCCLWATCH_TOOLS_EXPORTER_DUMP_CENSUS_H_
#define NCCLWATCH_TOOLS_EXPORTER_DUMP_CENSUS_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "core/status/status.h"
#include "tools/exporter/metrics_families.h"

namespace ncclwatch::tools {

class DumpCensus {
 public:
  // At most this many dump files are looked at per directory (a dump is tens of KiB and one
  // per rank per incident: 100000 is ~10000 incidents of an 8-rank host). Past it the census
  // stops growing and `truncated` says so.
  static constexpr size_t kMaxFiles = 100000;

  explicit DumpCensus(std::string dir) : dir_(std::move(dir)) {}

  using Counts = std::map<std::pair<std::string, std::string>, DumpCounts>;

  // Rescans the directory (one subdirectory level per host is fine). An unreadable directory
  // is an error (one line) and keeps the last counts.
  Status Scan();
  // The counts by (job, host) of the last scan that succeeded.
  Counts counts() const;

  uint64_t rejected_files() const { return rejected_; }
  bool truncated() const { return truncated_; }

 private:
  struct FileKey {
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
    bool operator<(const FileKey& o) const {
      return std::tie(dev, ino, size, mtime_ns) < std::tie(o.dev, o.ino, o.size, o.mtime_ns);
    }
  };
  struct FileFacts {
    bool valid = false;
    std::string job, host, incident, kind;
  };

  std::string dir_;
  std::map<FileKey, FileFacts> files_;
  uint64_t rejected_ = 0;
  bool truncated_ = false;
};

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_EXPORTER_DUMP_CENSUS_H_
