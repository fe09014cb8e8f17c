// Preparing the directory hang dumps (and trigger files) go to. Dumps hold the job's
// environment and stacks, and the directory is often on a file system other users see.
//
// The rule:
//  * Missing components are created with mode 0700 (a stricter umask narrows it further).
//  * A directory owned by us is used as it is.
//  * A directory owned by another user (root's /tmp, a teammate's project dir) is used only
//    when the user named it explicitly (NCCLWATCH_DUMP_DIR) and other users cannot replace
//    entries in it: not writable by group or other, unless the sticky bit is set (then only
//    an entry's owner may rename or remove it). It is used with one warning. The default
//    directory (./ncclwatch-dumps/<job>) owned by someone else is refused: we did not
//    choose to trust its owner.
//  * The path must name a directory. A symlink to one is followed only when the user named
//    the path (NCCLWATCH_DUMP_DIR may point through one); at the default location it is
//    refused. The checks apply to the directory actually opened.
//  * The directory is held open (DumpDirectory): the checks are made with fstat on that fd
//    and the dumps are created and renamed relative to it (openat/renameat, see
//    dump_writer.h). Replacing the directory or a component of its path after the checks,
//    e.g. by a symlink to another user's directory, cannot redirect the writes.
// Files are then written 0600 with O_EXCL|O_NOFOLLOW temporaries (see dump_writer.h).
#ifndef NCCLWATCH_CORE_DUMP_DUMP_DIR_H_
#define NCCLWATCH_CORE_DUMP_DUMP_DIR_H_

#include <string>
#include <utility>
#include <vector>

#include "core/status/status.h"

namespace ncclwatch::dump {

// An open directory (O_DIRECTORY) and the path it was opened by, for messages. Move-only;
// closes the fd on destruction.
class DumpDirectory {
 public:
  DumpDirectory() = default;
  DumpDirectory(int fd, std::string path) noexcept : fd_(fd), path_(std::move(path)) {}
  DumpDirectory(DumpDirectory&& other) noexcept;
  DumpDirectory& operator=(DumpDirectory&& other) noexcept;
  DumpDirectory(const DumpDirectory&) = delete;
  DumpDirectory& operator=(const DumpDirectory&) = delete;
  ~DumpDirectory();

  int fd() const { return fd_; }  // -1 when not open
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// Creates `path` if needed and applies the rule above. `named_by_user`: the path came from
// NCCLWATCH_DUMP_DIR rather than the default. Returns the open directory to write to
// (WriteDump in dump_writer.h), or the one-line reason it may not be used; a directory used
// with a caveat (another user's) appends one line to *warnings (log it once). Never throws.
Result<DumpDirectory> PrepareDumpDirectory(const std::string& path, bool named_by_user,
                                           std::vector<std::string>* warnings = nullptr) noexcept;

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_DIR_H_
