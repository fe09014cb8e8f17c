// Listing /dev/shm by segment name: what the reader (status, the watchdog's snapshot) and
// segment garbage collection both start from. Names only: nothing here opens a file, so a
// listed entry is a candidate, to be checked by SegmentFile::Open before it is trusted.
#ifndef NCCLWATCH_CORE_SHM_SHM_DIRECTORY_H_
#define NCCLWATCH_CORE_SHM_SHM_DIRECTORY_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace ncclwatch::shm {

// Entries of /dev/shm whose name starts with `prefix`, sorted; empty when /dev/shm cannot be
// read.
std::vector<std::string> ListShmEntries(std::string_view prefix);

// Job ids of `uid`'s segment entries (segment_name.h) for which `keep(entry)` holds, sorted
// and without repeats.
std::vector<std::string> JobIdsWhere(uid_t uid, bool (*keep)(const std::string& entry));

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_SHM_DIRECTORY_H_
