#include "core/dump/dump_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

}  // namespace

DumpDirStatus PrepareDumpDirectory(const std::string& path, bool named_by_user) noexcept {
  DumpDirStatus status;
  try {
    int error = 0;
    if (!MakeDirs(path, &error)) {
      status.error = "cannot create dump directory " + path + ": " + std::strerror(error);
      return status;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      status.error = "dump directory " + path + " is not a directory";
      return status;
    }
    if (st.st_uid == ::geteuid()) {
      status.usable = true;
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
  } catch (...) {
    status = DumpDirStatus{false, "out of memory preparing the dump directory", ""};
  }
  return status;
}

}  // namespace ncclwatch::dump
