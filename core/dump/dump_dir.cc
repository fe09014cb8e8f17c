#include "core/dump/dump_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace ncclwatch::dump {
namespace {

bool MakeDirs(const std::string& path, int* error) {
  for (size_t pos = 0; pos != std::string::npos;) {
    pos = path.find('/', pos + 1);
    const std::string partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      *error = errno;
      return false;
    }
  }
  return true;
}

std::string ModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The directory `path` names, opened without following a symlink in its last component
// unless the user named the path. -1 with errno on failure (ELOOP: a refused symlink).
int OpenDirectory(const std::string& path, bool named_by_user) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  int fd = ::open(path.c_str(), kFlags | O_NOFOLLOW);
  if (fd >= 0 || (errno != ELOOP && errno != ENOTDIR)) return fd;
  // O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR: tell it from a plain file.
  const int error = errno;
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) {
    errno = error;
    return -1;
  }
  if (named_by_user) return ::open(path.c_str(), kFlags);
  errno = ELOOP;
  return -1;
}

}  // namespace

DumpDirectory::DumpDirectory(DumpDirectory&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

DumpDirectory& DumpDirectory::operator=(DumpDirectory&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

DumpDirectory::~DumpDirectory() {
  if (fd_ >= 0) ::close(fd_);
}

Result<DumpDirectory> PrepareDumpDirectory(const std::string& path, bool named_by_user,
                                           std::vector<std::string>* warnings) noexcept {
  try {
    int error = 0;
    if (!MakeDirs(path, &error)) {
      return Status::Error("cannot create dump directory " + path + ": " + std::strerror(error), error);
    }
    DumpDirectory directory(OpenDirectory(path, named_by_user), path);
    if (directory.fd() < 0) {
      error = errno;
      return Status::Error(error == ELOOP ? "dump directory " + path +
                                                " is a symlink; refusing it at the default location (set "
                                                "NCCLWATCH_DUMP_DIR to follow it)"
                                          : "dump directory " + path + " is not a directory: " + std::strerror(error),
                           error);
    }
    // Checked on the fd we write through, not on the path, which may change under us.
    struct stat st {};
    if (::fstat(directory.fd(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::Error("dump directory " + path + " is not a directory", ENOTDIR);
    }
    if (st.st_uid == ::geteuid()) return directory;
    const std::string owner = "dump directory " + path + " belongs to uid " + std::to_string(st.st_uid);
    if (!named_by_user) {
      return Status::Error(owner + "; refusing the default location (set NCCLWATCH_DUMP_DIR to a directory of yours)");
    }
    const bool others_may_replace = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0;
    if (others_may_replace) {
      return Status::Error(owner + " and is writable by others without the sticky bit (mode " +
                           ModeText(st.st_mode) + "); refusing it");
    }
    if (warnings) {
      warnings->push_back(owner + " (mode " + ModeText(st.st_mode) +
                          "); writing there because NCCLWATCH_DUMP_DIR names it");
    }
    return directory;
  } catch (const std::exception&) {  // out of memory building a message
    return Status::Error("out of memory preparing the dump directory", ENOMEM);
  }
}

}  // namespace ncclwatch::dump
