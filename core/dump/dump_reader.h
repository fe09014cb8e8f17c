// Reads dumps back, validating them against the schema (README.md).
//
// Every failure is a one-line message starting with the offending path, e.g.
//   "d/rank3-h-12-i.json: not valid JSON (truncated or corrupt) at byte 812"
//   "d/x.json: foreign JSON: schema is \"foo\", expected \"ncclwatch.dump\""
//   "d/x.json: dump version 9 is newer than this ncclwatch supports (1); upgrade ncclwatch"
// The reader never throws.
#ifndef NCCLWATCH_CORE_DUMP_DUMP_READER_H_
#define NCCLWATCH_CORE_DUMP_DUMP_READER_H_

#include <string>
#include <vector>

#include "core/dump/dump.h"

namespace ncclwatch::dump {

struct LoadedDump {
  std::string path;
  RankDump dump;
};

struct RejectedFile {
  std::string path;
  std::string error;  // one line, starts with path
};

struct DumpSet {
  std::string error;                  // directory-level failure (missing, unreadable, not a dir)
  std::vector<LoadedDump> dumps;      // sorted by path
  std::vector<RejectedFile> rejected; // *.json files that are not valid dumps
};

// Returns false and sets *error (one line) when `path` is not a valid dump.
bool ReadDumpFile(const std::string& path, RankDump* out, std::string* error) noexcept;

// Reads every "*.json" under `dir`, recursively (one subdirectory per host is fine).
// Hidden files (the writer's temporaries) are skipped.
DumpSet ReadDumpDir(const std::string& dir) noexcept;

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_READER_H_
