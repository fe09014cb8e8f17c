#include "core/dump/dump_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <new>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "core/dump/dump_text.h"

namespace ncclwatch::dump {
namespace {

std::string Sanitize(const std::string& text) {
  std::string out = text.empty() ? "unknown" : text;
  for (char& c : out) {
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                c == '_' || c == '-';
    if (!keep) c = '_';
  }
  return out;
}

Status Failure(int error, const std::string& what, const std::string& path) {
  return Status::Error(what + " " + path + ": " + std::strerror(error), error);
}

bool WriteAll(int fd, const std::string& data, const WriteHooks& hooks) {
  auto write_fn = hooks.write ? hooks.write : ::write;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write_fn(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseNameOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string TempNameFor(const std::string& name, int attempt) {
  return "." + name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(attempt);
}

// `name` written atomically in `dir` (its path is for messages only):
// every step is relative to the fd, so the directory cannot be swapped under us.
Status WriteFileAt(const DumpDirectory& dir, const std::string& name, const std::string& contents,
                   const WriteHooks& hooks) {
  const std::string path = dir.path() + "/" + name;
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < kTempNameAttempts && fd < 0; ++attempt) {
    temp = TempNameFor(name, attempt);
    fd = ::openat(dir.fd(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  // The user named `path`; the temporary beside it is ours, so errors name the path.
  if (fd < 0) return Failure(errno, "cannot create", path);
  auto fsync_fn = hooks.fsync ? hooks.fsync : ::fsync;
  bool written = WriteAll(fd, contents, hooks) && fsync_fn(fd) == 0;
  int error = errno;
  if (::close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  if (!written) {
    ::unlinkat(dir.fd(), temp.c_str(), 0);
    return Failure(error, "cannot write", path);
  }
  if (::renameat(dir.fd(), temp.c_str(), dir.fd(), name.c_str()) != 0) {
    error = errno;
    ::unlinkat(dir.fd(), temp.c_str(), 0);
    return Failure(error, "cannot rename into", path);
  }
  // The rename is durable only once the directory entry is; failure here loses nothing
  // already visible, so it is not reported.
  ::fsync(dir.fd());
  return OkStatus();
}

// The path-based entry points open the directory as given (a symlink is followed: the
// caller chose the path) and then write through the fd like the rest.
DumpDirectory OpenForWriting(const std::string& dir) {
  return DumpDirectory(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), dir);
}

}  // namespace

std::string DumpFileStem(const RankDump& dump) {
  std::string rank = dump.process.global_rank >= 0 ? std::to_string(dump.process.global_rank) : "X";
  return "rank" + rank + "-" + Sanitize(dump.process.host) + "-" + std::to_string(dump.process.pid) + "-" +
         Sanitize(dump.incident.id);
}

std::string TempPathFor(const std::string& path, int attempt) {
  return DirectoryOf(path) + "/" + TempNameFor(BaseNameOf(path), attempt);
}

// Every function below is noexcept and catches at its boundary what the standard library and
// nlohmann::json throw (all std::exception): out of memory, and, for the encoder, its errors.

Status WriteFileAtomically(const std::string& path, const std::string& contents, const WriteHooks& hooks) noexcept {
  try {
    const DumpDirectory dir = OpenForWriting(DirectoryOf(path));
    if (dir.fd() < 0) return Failure(errno, "cannot open the directory of", path);
    return WriteFileAt(dir, BaseNameOf(path), contents, hooks);
  } catch (const std::bad_alloc&) {
    return Failure(ENOMEM, "out of memory writing", path);
  } catch (const std::exception&) {
    return Failure(EIO, "unexpected error writing", path);
  }
}

Result<DumpFiles> WriteDump(const RankDump& dump, const DumpDirectory& dir, const WriteHooks& hooks) noexcept {
  try {
    if (dir.fd() < 0) return Failure(EBADF, "no open dump directory for", dir.path());
    const std::string stem = DumpFileStem(dump);
    std::string json_text = ToJson(dump).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (Status json = WriteFileAt(dir, stem + ".json", json_text, hooks); !json.ok()) return json;
    if (Status text = WriteFileAt(dir, stem + ".txt", RenderDumpText(dump), hooks); !text.ok()) {
      return Status::Error(text.message() + " (the .json was written)", text.error_number());
    }
    return DumpFiles{dir.path() + "/" + stem + ".json", dir.path() + "/" + stem + ".txt"};
  } catch (const std::bad_alloc&) {
    return Failure(ENOMEM, "out of memory writing dump to", dir.path());
  } catch (const std::exception&) {
    return Failure(EINVAL, "cannot encode dump for", dir.path());
  }
}

Result<DumpFiles> WriteDump(const RankDump& dump, const std::string& dir, const WriteHooks& hooks) noexcept {
  try {
    const DumpDirectory directory = OpenForWriting(dir);
    if (directory.fd() < 0) return Failure(errno, "cannot open dump directory", dir);
    return WriteDump(dump, directory, hooks);
  } catch (const std::bad_alloc&) {
    return Failure(ENOMEM, "out of memory writing dump to", dir);
  }
}

}  // namespace ncclwatch::dump
