#include "segment_store.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ncclsim {
namespace {

std::string BaseName(uint64_t comm_hash) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "ncclsim.%u.%016" PRIx64, static_cast<unsigned>(getuid()), comm_hash);
  return buf;
}

// The fabric directory is shared with other hosts' ranks: it must be a real directory (not a
// symlink) that only we or root control, or, if others may write there, sticky like /tmp, so
// nobody else can swap our files.
bool FabricDirTrusted(const std::string& dir, std::string* error) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    *error = "NCCLSIM_FABRIC_DIR " + dir + ": " + std::strerror(errno);
    errno = EPERM;
    return false;
  }
  errno = EPERM;  // for every refusal below: a hard failure, never "not there yet"
  if (!S_ISDIR(st.st_mode)) {
    *error = "NCCLSIM_FABRIC_DIR " + dir + ": not a directory (symlinks are refused)";
    return false;
  }
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    *error = "NCCLSIM_FABRIC_DIR " + dir + ": owned by uid " + std::to_string(st.st_uid) + ", not us or root";
    return false;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    *error = "NCCLSIM_FABRIC_DIR " + dir + ": writable by others and not sticky";
    return false;
  }
  return true;
}

bool SegmentTrusted(int fd, const std::string& name, std::string* error) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *error = "fstat " + name + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    *error = name + ": not a regular file of ours with mode 0600; refusing it";
    errno = EPERM;
    return false;
  }
  return true;
}

}  // namespace

SegmentStore::SegmentStore(uint64_t comm_hash) {
  const char* dir = std::getenv("NCCLSIM_FABRIC_DIR");
  fabric_ = dir != nullptr && *dir != '\0';
  name_ = fabric_ ? std::string(dir) + "/" + BaseName(comm_hash) : "/" + BaseName(comm_hash);
}

int SegmentStore::Open(bool create, std::string* error) const {
  const int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT | O_EXCL : 0);
  int fd = -1;
  if (fabric_) {
    const std::string dir = name_.substr(0, name_.rfind('/'));
    if (!FabricDirTrusted(dir.empty() ? "/" : dir, error)) return -1;
    fd = open(name_.c_str(), flags, 0600);
  } else {
    fd = shm_open(name_.c_str(), flags, 0600);
  }
  if (fd < 0) {
    const int saved = errno;
    *error = std::string(fabric_ ? "open " : "shm_open ") + name_ + ": " + std::strerror(saved);
    errno = saved;
    return -1;
  }
  if (!create && !SegmentTrusted(fd, name_, error)) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

void SegmentStore::Unlink() const {
  if (fabric_) {
    unlink(name_.c_str());
  } else {
    shm_unlink(name_.c_str());
  }
}

}  // namespace ncclsim
