// Writes one rank's dump as two files, atomically, without throwing.
//
// Files: <dir>/<stem>.json (the schema in README.md) and <dir>/<stem>.txt (for humans),
// where <stem> is DumpFileStem(dump). Each file is first written to a hidden temporary in
// the same directory, fsync'ed, then renamed into place, so a reader sees either the whole
// file or nothing; on failure the temporary is removed. The JSON is written first: when
// only the .txt fails, the .json stays and the error says so.
//
// Files are created mode 0600 (they hold the environment and stacks; a stricter umask
// narrows it further). The directory may be shared: a temporary is opened with
// O_CREAT|O_EXCL|O_NOFOLLOW, so a file or symlink planted at its name is never written
// through; the writer then tries the next of kTempNameAttempts names (TempPathFor) and
// fails with EEXIST when all are taken. rename() replaces a symlink at the final name
// itself, never its target.
//
// Every file is created, renamed and removed relative to the directory's open fd (openat,
// renameat, unlinkat): give WriteDump the DumpDirectory that PrepareDumpDirectory checked
// (dump_dir.h), and a directory swapped after the checks cannot redirect the dump. The
// path-based overloads open the directory themselves, following a symlink.
//
// One writer per process at a time: temporaries are named after the pid.
//
// Linked into the LD_PRELOAD library: the API never throws and reports every failure
// (unwritable or missing dir, ENOSPC, ...) as a Status (core/status/status.h: one line and the
// errno of the first failure) the caller can log before carrying on.
#ifndef NCCLWATCH_CORE_DUMP_DUMP_WRITER_H_
#define NCCLWATCH_CORE_DUMP_DUMP_WRITER_H_

#include <sys/types.h>

#include <string>

#include "core/dump/dump.h"
#include "core/dump/dump_dir.h"
#include "core/status/status.h"

namespace ncclwatch::dump {

// The two files of a written dump.
struct DumpFiles {
  std::string json_path;
  std::string text_path;
};

// Seams for tests: replace the system calls that can fail for lack of space.
struct WriteHooks {
  ssize_t (*write)(int fd, const void* buf, size_t len) = nullptr;  // nullptr: ::write
  int (*fsync)(int fd) = nullptr;                                    // nullptr: ::fsync
};

// "rank<R>-<host>-<pid>-<incident>" with every character outside [A-Za-z0-9._-] of host
// and incident replaced by '_'; R is "X" when the global rank is unknown (-1).
std::string DumpFileStem(const RankDump& dump);

// An error's message is one line naming the file ("cannot write /d/x.json: No space left on
// device"; "... (the .json was written)" when only the .txt failed), its error_number the errno.
Result<DumpFiles> WriteDump(const RankDump& dump, const DumpDirectory& dir, const WriteHooks& hooks = {}) noexcept;
Result<DumpFiles> WriteDump(const RankDump& dump, const std::string& dir, const WriteHooks& hooks = {}) noexcept;

// The temporaries WriteFileAtomically may use for `path`, in order: attempt in [0, kTempNameAttempts).
inline constexpr int kTempNameAttempts = 8;
std::string TempPathFor(const std::string& path, int attempt);

// Writes `contents` to `path` atomically as described above. Exposed for tests and tools.
Status WriteFileAtomically(const std::string& path, const std::string& contents,
                           const WriteHooks& hooks = {}) noexcept;

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_WRITER_H_
