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

DumpDirStatus PrepareDumpDirectory(const std::string& path, bool named_by_user) noexcept {
  DumpDirStatus status;
  try {
    int error = 0;
    if (!MakeDirs(path, &error)) {
      status.error = "cannot create dump directory " + path + ": " + std::strerror(error);
      return status;
    }
    DumpDirectory directory(OpenDirectory(path, named_by_user), path);
    if (directory.fd() < 0) {
      error = errno;
      status.error = error == ELOOP ? "dump directory " + path +
                                          " is a symlink; refusing it at the default location (set "
                                          "NCCLWATCH_DUMP_DIR to follow it)"
                                    : "dump directory " + path + " is not a directory: " + std::strerror(error);
      return status;
    }
    // Checked on the fd we write through, not on the path, which may change under us.
    struct stat st {};
    if (::fstat(directory.fd(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      status.error = "dump directory " + path + " is not a directory";
      return status;
    }
    if (st.st_uid == ::geteuid()) {
      status.usable = true;
      status.directory = std::move(directory);
      return status;
    }
    const std::string owner = "dump directory " + path + " belongs to uid " + std::to_string(st.st_uid);
    if (!named_by_user) {
      status.error = owner + "; refusing the default location (set NCCLWATCH_DUMP_DIR to a directory of yours)";
      return status;
    }
    const bool others_may_replace = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0;
    if (others_may_replace) {
      status.error = owner + " and is writable by others without the sticky bit (mode " + ModeText(st.st_mode) +
                     "); refusing it";
      return status;
    }
    status.usable = true;
    status.warning = owner + " (mode " + ModeText(st.st_mode) + "); writing there because NCCLWATCH_DUMP_DIR names it";
    status.directory = std::move(directory);
  } catch (...) {
    status = DumpDirStatus{false, "out of memory preparing the dump directory", "", DumpDirectory()};
  }
  return status;
}

}  // namespace ncclwatch::dump
