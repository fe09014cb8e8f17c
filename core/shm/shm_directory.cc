#include "core/shm/shm_directory.h"

#include <dirent.h>

#include <algorithm>
#include <set>

#include "core/shm/segment_name.h"

namespace ncclwatch::shm {

std::vector<std::string> ListShmEntries(std::string_view prefix) {
  std::vector<std::string> entries;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return entries;
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name.substr(0, prefix.size()) == prefix) entries.emplace_back(name);
  }
  closedir(dir);
  std::sort(entries.begin(), entries.end());
  return entries;
}

std::vector<std::string> JobIdsWhere(uid_t uid, bool (*keep)(const std::string& entry)) {
  const std::string prefix = std::string(kSegmentPrefix) + std::to_string(uid) + ".";
  std::set<std::string> jobs;
  for (const std::string& entry : ListShmEntries(prefix)) {
    // <job>.<pid>.<ticks>: the job id is what precedes the last two fields.
    const std::string rest = entry.substr(prefix.size());
    const size_t last = rest.rfind('.');
    if (last == std::string::npos || last == 0) continue;
    const size_t middle = rest.rfind('.', last - 1);
    if (middle == std::string::npos || middle == 0) continue;
    const std::string job = rest.substr(0, middle);
    ParsedSegmentName parsed;
    if (ParseSegmentEntry(entry, uid, job, &parsed) && keep(entry)) jobs.insert(job);
  }
  return {jobs.begin(), jobs.end()};
}

}  // namespace ncclwatch::shm
