#include "tools/exporter/dump_census.h"

#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <system_error>

#include "core/detect/verdict.h"
#include "core/dump/dump_reader.h"

namespace ncclwatch::tools {

Status DumpCensus::Scan() {
  namespace fs = std::filesystem;
  std::map<FileKey, FileFacts> now;
  std::error_code ec;
  // Depth 1 at most: <dir>/*.json and <dir>/<host>/*.json. Symlinks are not followed.
  fs::recursive_directory_iterator it(dir_, fs::directory_options::skip_permission_denied, ec), end;
  uint64_t rejected = 0;
  truncated_ = false;
  for (; !ec && it != end; it.increment(ec)) {
    if (it.depth() >= 1) it.disable_recursion_pending();
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (name.empty() || name[0] == '.' || path.extension() != ".json") continue;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (now.size() >= kMaxFiles) {
      truncated_ = true;
      break;
    }
    const FileKey key{st.st_dev, st.st_ino, st.st_size,
                      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
    auto known = files_.find(key);
    FileFacts facts;
    if (known != files_.end()) {
      facts = known->second;
    } else if (const Result<dump::RankDump> d = dump::ReadDumpFile(path.string()); d.ok()) {
      facts.valid = true;
      facts.job = d->incident.job_id;
      facts.host = d->process.host;
      facts.incident = d->incident.id;
      // Only the documented kinds become label values: a forged dump cannot add series.
      facts.kind = detect::ToString(d->verdict.kind);  // "unknown" for any other kind
    }
    if (!facts.valid) ++rejected;
    now.emplace(key, std::move(facts));
  }
  if (ec) return Status::Error("cannot read dump directory " + dir_ + ": " + ec.message(), ec.value());
  rejected_ = rejected;
  files_ = std::move(now);
  return OkStatus();
}

DumpCensus::Counts DumpCensus::counts() const {
  Counts counts;
  std::set<std::tuple<std::string, std::string, std::string>> incidents;  // job, host, incident id
  for (const auto& [key, f] : files_) {
    if (!f.valid) continue;
    DumpCounts& c = counts[{f.job, f.host}];
    ++c.dumps;
    // One incident is dumped by every rank of the host: count it once, under its first kind.
    if (incidents.insert({f.job, f.host, f.incident}).second) ++c.incidents_by_kind[f.kind];
  }
  return counts;
}

}  // namespace ncclwatch::tools
