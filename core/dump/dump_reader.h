// Reads dumps back, validating them against the schema (README.md).
//
// Every failure is a one-line message starting with the offending path, e.g.
//   "d/rank3-h-12-i.json: not valid JSON (truncated or corrupt) at byte 812"
//   "d/x.json: foreign JSON: schema is \"foo\", expected \"ncclwatch.dump\""
//   "d/x.json: dump version 9 is newer than this ncclwatch supports (1); upgrade ncclwatch"
// The reader never throws: errors are Status/Result (core/status/status.h).
//
// Input budget: a directory is read only when its dumps fit in a total budget of bytes
// (ReadLimits), checked before anything is parsed. Each real file counts once: files reached
// through several names (symlinks, hard links) are identified by st_dev/st_ino, read once,
// and count once; each counts at least kMinChargedBytes (the cost of holding any dump). Each
// file is also read no further than the size admitted, so a file that grows meanwhile cannot
// exceed the budget. Read (no JSON document is built: json_stream.h), a dump as the watchdog
// writes it takes about its own size in memory (82 KiB of text, 80 KiB of structs), and one
// of text dense with tiny records up to about 10 times its size (61 MB of 2.6 million records:
// 639 MiB at the peak), so the budget also bounds memory. A job of 16384 ranks writes about
// 1.3 GiB of dumps: more than the default budget, which keeps a hostile set's memory bounded
// too; `ncclwatch analyze --max-input-bytes 2GiB` reads it.
#ifndef NCCLWATCH_CORE_DUMP_DUMP_READER_H_
#define NCCLWATCH_CORE_DUMP_DUMP_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/dump/dump.h"
#include "core/status/status.h"

namespace ncclwatch::dump {

struct LoadedDump {
  std::string path;
  RankDump dump;
};

struct RejectedFile {
  std::string path;
  std::string error;  // one line, starts with path
};

// A dump holds a few hundred records and stacks: tens of KiB (82 KiB with 8 threads of 20
// frames and 2 communicators of 64 records). 512 MiB holds 6000 to 10000 real ones.
inline constexpr uint64_t kDefaultInputBudgetBytes = 512ull << 20;
// What a tiny file costs anyway once parsed (the RankDump, its path, its vectors).
inline constexpr uint64_t kMinChargedBytes = 4096;
// No single file larger than this is a dump; larger ones are rejected unread.
inline constexpr uint64_t kMaxDumpBytes = 64ull << 20;

struct ReadLimits {
  uint64_t budget_bytes = kDefaultInputBudgetBytes;  // total over every distinct file
};

struct DumpSet {
  std::vector<LoadedDump> dumps;      // sorted by path
  std::vector<RejectedFile> rejected; // *.json files that are not valid dumps
};

// Why a whole directory could not be read (missing, unreadable, not a directory, over the
// input budget): the caller must tell the budget apart, to say how to raise it.
struct DumpDirError {
  std::string why;           // one line, starting with the directory
  bool over_budget = false;  // the dumps exceed ReadLimits::budget_bytes
};

// The dump at `path`, or why it is not a valid one (one line, starting with the path).
Result<RankDump> ReadDumpFile(const std::string& path) noexcept;

// Reads every "*.json" under `dir`, recursively (one subdirectory per host is fine).
// Hidden files (the writer's temporaries) and anything but regular files (after following
// symlinks) are skipped; symlinks to directories are not followed. When the distinct files
// exceed limits.budget_bytes nothing is read and the error says, in one line, e.g.
//   "d: the dumps exceed the input budget of 536870912 bytes (512 MiB) at file 3 (d/x.json)"
Result<DumpSet, DumpDirError> ReadDumpDir(const std::string& dir, const ReadLimits& limits = ReadLimits{}) noexcept;

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_READER_H_
