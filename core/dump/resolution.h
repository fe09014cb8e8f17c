// The note a rank leaves when an incident it dumped for is over: the collective (or init,
// or host sync) behind it completed after all, e.g. a collective 7 s slow under a 3 s
// threshold. `ncclwatch analyze` reads these notes to mark its verdict resolved.
//
// File: <dir>/<dump stem>.resolved, next to <dir>/<dump stem>.json of the same process and
// incident (DumpFileStem), so a dump and its note pair by name alone. Not "*.json": dump
// readers that know nothing of notes never list them. Content (README.md "Resolution"):
// one line of JSON, schema "ncclwatch.resolution" version 1.
//
// Written like a dump (WriteFileAtomically: hidden O_CREAT|O_EXCL|O_NOFOLLOW temporary,
// 0600, fsync, rename) into the directory the dump went to, which PrepareDumpDirectory
// already vetted. Read bounded (kMaxResolutionBytes) and validated: a note is input, and
// one that does not belong to its dump (other incident or pid) is refused. Never throws.
#ifndef NCCLWATCH_CORE_DUMP_RESOLUTION_H_
#define NCCLWATCH_CORE_DUMP_RESOLUTION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "core/dump/dump.h"
#include "core/dump/dump_writer.h"
#include "core/status/status.h"

namespace ncclwatch::dump {

inline constexpr char kResolutionSchemaName[] = "ncclwatch.resolution";
inline constexpr int kResolutionSchemaVersion = 1;
inline constexpr char kResolutionExtension[] = ".resolved";
// A note is ~300 bytes; anything larger is not one (read no further).
inline constexpr uint64_t kMaxResolutionBytes = 4096;

struct Resolution {
  std::string incident_id;        // the dump's incident.id
  int32_t pid = 0;                // the dump's process.pid
  int global_rank = -1;
  std::string host;
  uint64_t detected_mono_ns = 0;  // the dump's incident.detected_mono_ns
  uint64_t resolved_mono_ns = 0;  // when this process saw the incident's key complete
  uint64_t resolved_unix_ns = 0;  // the same instant, wall clock
  std::string resolved_iso;       // the same instant, ISO-8601 UTC
};

// A note for `dump`: its identity and detection time, not yet stamped.
Resolution ResolutionOf(const RankDump& dump) noexcept;
// Sets resolved_mono_ns, resolved_unix_ns and resolved_iso to now.
void StampResolutionTime(Resolution* resolution) noexcept;

// Nanoseconds from detection to resolution, on the writing host's monotonic clock; 0 when the
// times are unset or inverted (a corrupt note).
uint64_t ResolvedAfterNs(const Resolution& resolution);

// "<dir>/<stem>.resolved" for the dump of `dump` written into `dir`.
std::string ResolutionPathFor(const RankDump& dump, const std::string& dir);
// The note of the dump at `dump_json_path` ("x/y.json" -> "x/y.resolved").
std::string ResolutionPathForDumpFile(const std::string& dump_json_path);

Status WriteResolution(const Resolution& resolution, const std::string& path) noexcept;

// Reads the note at `path`: nullopt when there is no such file (the incident did not resolve
// on that rank, or the dump predates notes); an error, one line starting with the path, when
// it is not a valid note (not a regular file, over kMaxResolutionBytes, not JSON, foreign
// schema, newer version, bad field).
Result<std::optional<Resolution>> ReadResolutionFile(const std::string& path) noexcept;

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_RESOLUTION_H_
