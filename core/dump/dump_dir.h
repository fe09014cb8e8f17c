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
//  * The path must name a directory (a symlink to one is followed: the user may point
//    NCCLWATCH_DUMP_DIR through one; the checks apply to the directory it names).
// Files are then written 0600 with O_EXCL|O_NOFOLLOW temporaries (see dump_writer.h).
#ifndef NCCLWATCH_CORE_DUMP_DUMP_DIR_H_
#define NCCLWATCH_CORE_DUMP_DUMP_DIR_H_

#include <string>

namespace ncclwatch::dump {

struct DumpDirStatus {
  bool usable = false;
  std::string error;    // one line when !usable
  std::string warning;  // one line when usable with a caveat (log it once)
};

// Creates `path` if needed and applies the rule above. `named_by_user`: the path came from
// NCCLWATCH_DUMP_DIR rather than the default. Never throws.
DumpDirStatus PrepareDumpDirectory(const std::string& path, bool named_by_user) noexcept;

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_DUMP_DIR_H_
