#include "core/dump/resolution.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/dump/checked_reader.h"
#include "core/dump/process_facts.h"

namespace ncclwatch::dump {
namespace {

using nlohmann::json;

// The note's fields, in the order they are checked (README.md, "Resolution notes").
const ObjectSpec& ResolutionSpec() {
  static const ObjectSpec spec({
      StringField<&Resolution::incident_id>("incident", kRequired),
      IntInRangeField<&Resolution::pid>("pid", 1, std::numeric_limits<int32_t>::max(), kRequired),
      IntInRangeField<&Resolution::global_rank>("global_rank", -1, std::numeric_limits<int32_t>::max(), kRequired),
      StringField<&Resolution::host>("host", kRequired),
      U64Field<&Resolution::detected_mono_ns>("detected_mono_ns"),
      U64Field<&Resolution::resolved_mono_ns>("resolved_mono_ns"),
      U64Field<&Resolution::resolved_unix_ns>("resolved_unix_ns"),
      LenientStringField<&Resolution::resolved_iso>("resolved_iso"),  // shown only: a malformed one is left out
  });
  return spec;
}

// Reads a regular file of at most kMaxResolutionBytes; nullopt when there is none. O_NONBLOCK:
// a FIFO planted under the name must not block open(); O_NOFOLLOW: a note is never reached
// through a symlink (the writer never makes one, rename() replaces any at the final name).
Result<std::optional<std::string>> ReadSmallFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return Status::Error(path + ": cannot open: " + std::strerror(errno), errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > kMaxResolutionBytes) {
    ::close(fd);
    return Status::Error(path + (S_ISREG(st.st_mode) ? ": too large to be a resolution note (" +
                                                           std::to_string(st.st_size) + " bytes)"
                                                     : std::string(": not a regular file")));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(done);
  return std::optional<std::string>(std::move(text));
}

}  // namespace

Resolution ResolutionOf(const RankDump& dump) noexcept {
  Resolution r;
  try {
    r.incident_id = dump.incident.id;
    r.pid = dump.process.pid;
    r.global_rank = dump.process.global_rank;
    r.host = dump.process.host;
    r.detected_mono_ns = dump.incident.detected_mono_ns;
  } catch (const std::exception&) {
    // Out of memory: the note goes out with what was filled.
  }
  return r;
}

void StampResolutionTime(Resolution* r) noexcept {
  Instant now = NowInstant();
  r->resolved_mono_ns = now.mono_ns;
  r->resolved_unix_ns = now.unix_ns;
  r->resolved_iso = std::move(now.iso);
}

uint64_t ResolvedAfterNs(const Resolution& r) {
  if (r.detected_mono_ns == 0 || r.resolved_mono_ns < r.detected_mono_ns) return 0;
  return r.resolved_mono_ns - r.detected_mono_ns;
}

std::string ResolutionPathFor(const RankDump& dump, const std::string& dir) {
  return dir + "/" + DumpFileStem(dump) + kResolutionExtension;
}

std::string ResolutionPathForDumpFile(const std::string& dump_json_path) {
  constexpr std::string_view kJson = ".json";
  std::string path = dump_json_path;
  if (path.size() >= kJson.size() && path.compare(path.size() - kJson.size(), kJson.size(), kJson) == 0) {
    path.resize(path.size() - kJson.size());
  }
  return path + kResolutionExtension;
}

Status WriteResolution(const Resolution& r, const std::string& path) noexcept {
  try {
    const json doc{{"schema", kResolutionSchemaName},
                   {"version", kResolutionSchemaVersion},
                   {"incident", r.incident_id},
                   {"pid", r.pid},
                   {"global_rank", r.global_rank},
                   {"host", r.host},
                   {"detected_mono_ns", r.detected_mono_ns},
                   {"resolved_mono_ns", r.resolved_mono_ns},
                   {"resolved_unix_ns", r.resolved_unix_ns},
                   {"resolved_iso", r.resolved_iso}};
    return WriteFileAtomically(path, doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
  } catch (const std::exception&) {  // out of memory
    return Status::Error("out of memory writing " + path, ENOMEM);
  }
}

Result<std::optional<Resolution>> ReadResolutionFile(const std::string& path) noexcept {
  try {
    Result<std::optional<std::string>> text = ReadSmallFile(path);
    if (!text.ok()) return text.error();
    if (!*text) return std::optional<Resolution>();
    static constexpr SchemaHeader kHeader{kResolutionSchemaName, kResolutionSchemaVersion, "resolution",
                                          "unreadable resolution note"};
    Resolution note;
    int version = 0;
    if (Status read = ReadCheckedJson(**text, kHeader, ResolutionSpec(), &note, &version); !read.ok()) {
      return Status::Error(path + ": " + read.message(), read.error_number());
    }
    return std::optional<Resolution>(std::move(note));
  } catch (const std::exception&) {  // out of memory for the text or a message
    return Status::Error(path + ": unreadable resolution note", ENOMEM);
  }
}

}  // namespace ncclwatch::dump
