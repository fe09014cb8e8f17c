#include "core/dump/resolution.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/dump/process_facts.h"

namespace ncclwatch::dump {
namespace {

using nlohmann::json;

uint64_t Now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Thrown inside ReadResolutionFile only; its message names the field.
struct BadField {
  std::string message;
};

const json& Required(const json& doc, const char* name) {
  auto it = doc.find(name);
  if (it == doc.end()) throw BadField{std::string("missing field '") + name + "'"};
  return *it;
}

std::string RequiredString(const json& doc, const char* name) {
  const json& v = Required(doc, name);
  if (!v.is_string()) throw BadField{std::string("field '") + name + "' must be a string"};
  return v.get<std::string>();
}

uint64_t OptionalUnsigned(const json& doc, const char* name) {
  auto it = doc.find(name);
  if (it == doc.end()) return 0;
  if (!it->is_number_unsigned()) throw BadField{std::string("field '") + name + "' must be a non-negative integer"};
  return it->get<uint64_t>();
}

int64_t RequiredInteger(const json& doc, const char* name, int64_t min, int64_t max) {
  const json& v = Required(doc, name);
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max)) ||
      v.get<int64_t>() < min || v.get<int64_t>() > max) {
    throw BadField{std::string("field '") + name + "' must be an integer in [" + std::to_string(min) + ", " +
                   std::to_string(max) + "]"};
  }
  return v.get<int64_t>();
}

Resolution FromJson(const json& doc) {
  if (!doc.is_object()) throw BadField{"foreign JSON: top level is not an object"};
  auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string() || schema->get<std::string>() != kResolutionSchemaName) {
    throw BadField{std::string("foreign JSON: not an ncclwatch resolution (schema \"") + kResolutionSchemaName +
                   "\" expected)"};
  }
  const int64_t version = RequiredInteger(doc, "version", 1, std::numeric_limits<int32_t>::max());
  if (version > kResolutionSchemaVersion) {
    throw BadField{"resolution version " + std::to_string(version) + " is newer than this ncclwatch supports (" +
                   std::to_string(kResolutionSchemaVersion) + "); upgrade ncclwatch"};
  }
  Resolution r;
  r.incident_id = RequiredString(doc, "incident");
  r.pid = static_cast<int32_t>(RequiredInteger(doc, "pid", 1, std::numeric_limits<int32_t>::max()));
  r.global_rank = static_cast<int>(RequiredInteger(doc, "global_rank", -1, std::numeric_limits<int32_t>::max()));
  r.host = RequiredString(doc, "host");
  r.detected_mono_ns = OptionalUnsigned(doc, "detected_mono_ns");
  r.resolved_mono_ns = OptionalUnsigned(doc, "resolved_mono_ns");
  r.resolved_unix_ns = OptionalUnsigned(doc, "resolved_unix_ns");
  auto iso = doc.find("resolved_iso");
  if (iso != doc.end() && iso->is_string()) r.resolved_iso = iso->get<std::string>();
  return r;
}

// Reads a regular file of at most kMaxResolutionBytes. O_NONBLOCK: a FIFO planted under the
// name must not block open(); O_NOFOLLOW: a note is never reached through a symlink (the
// writer never makes one, rename() replaces any at the final name).
ResolutionRead ReadSmallFile(const std::string& path, std::string* text, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return ResolutionRead::kAbsent;
    *error = path + ": cannot open: " + std::strerror(errno);
    return ResolutionRead::kInvalid;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > kMaxResolutionBytes) {
    *error = path + (S_ISREG(st.st_mode) ? ": too large to be a resolution note (" + std::to_string(st.st_size) +
                                               " bytes)"
                                         : std::string(": not a regular file"));
    ::close(fd);
    return ResolutionRead::kInvalid;
  }
  text->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < text->size()) {
    const ssize_t n = ::read(fd, text->data() + done, text->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  text->resize(done);
  return ResolutionRead::kRead;
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
  } catch (...) {
    // Out of memory: the note goes out with what was filled.
  }
  return r;
}

void StampResolutionTime(Resolution* r) noexcept {
  r->resolved_mono_ns = Now(CLOCK_MONOTONIC);
  r->resolved_unix_ns = Now(CLOCK_REALTIME);
  try {
    r->resolved_iso = FormatIso8601Utc(r->resolved_unix_ns);
  } catch (...) {
  }
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

WriteResult WriteResolution(const Resolution& r, const std::string& path) noexcept {
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
  } catch (...) {
    WriteResult failed;
    failed.error = ENOMEM;
    failed.message = "out of memory writing " + path;
    return failed;
  }
}

ResolutionRead ReadResolutionFile(const std::string& path, Resolution* out, std::string* error) noexcept {
  try {
    std::string text;
    const ResolutionRead read = ReadSmallFile(path, &text, error);
    if (read != ResolutionRead::kRead) return read;
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::parse_error& e) {
      *error = path + ": not valid JSON (truncated or corrupt) at byte " + std::to_string(e.byte);
      return ResolutionRead::kInvalid;
    }
    *out = FromJson(doc);
    return ResolutionRead::kRead;
  } catch (const BadField& e) {
    *error = path + ": " + e.message;
  } catch (...) {
    *error = path + ": unreadable resolution note";
  }
  return ResolutionRead::kInvalid;
}

}  // namespace ncclwatch::dump
