#include "core/dump/dump_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <utility>


#include "core/dump/dump_json.h"

namespace ncclwatch::dump {
namespace {

namespace fs = std::filesystem;

// Files above this are read one at a time: text dense with tiny records takes up to ~10 times
// its size once read (dump_reader.h), so two big files at once would double the peak for no gain.
constexpr uint64_t kSerialParseBytes = 4ull << 20;

// Reads at most `max_bytes` of a regular file. O_NONBLOCK: a name that turned into a FIFO
// after listing must not block open(); it is refused by the S_ISREG check instead.
Result<std::string> ReadWholeFile(const std::string& path, uint64_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::Error(path + ": cannot open: " + std::strerror(errno), errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return Status::Error(path + ": cannot read: " + std::strerror(error), error);
  }
  const uint64_t size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  if (!S_ISREG(st.st_mode) || size > max_bytes) {
    ::close(fd);
    return Status::Error(!S_ISREG(st.st_mode) ? path + ": not a regular file"
                         : max_bytes == kMaxDumpBytes
                             ? path + ": too large to be a dump (" + std::to_string(size) + " bytes)"
                             : path + ": grew to " + std::to_string(size) + " bytes after " +
                                   std::to_string(max_bytes) + " were admitted to the input budget");
  }
  std::string text(size, '\0');
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // shrank meanwhile: parse what is there
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(done);
  return text;
}

Result<RankDump> ReadDumpFileWithin(const std::string& path, uint64_t max_bytes) noexcept {
  try {
    Result<std::string> text = ReadWholeFile(path, max_bytes);
    if (!text.ok()) return text.error();
    Result<RankDump> dump = ParseDump(*text);
    if (!dump.ok()) return Status::Error(path + ": " + dump.error().message(), dump.error().error_number());
    return dump;
  } catch (const std::exception&) {  // out of memory for the text or a message
    return Status::Error(path + ": out of memory while reading it", ENOMEM);
  }
}

// A *.json file found under the directory, and how many bytes of it may be read.
struct Listed {
  std::string path;
  uint64_t admitted = 0;
};

// The budget charge of a file of `size` bytes: files too large to be a dump are refused
// unread, and every file costs at least kMinChargedBytes once parsed.
uint64_t Charge(uint64_t size) { return size > kMaxDumpBytes ? kMinChargedBytes : std::max(size, kMinChargedBytes); }

std::string FormatBudget(uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) + " MiB)";
}

// Lists the distinct regular *.json files under `dir`, by path. Fails when listing fails or
// the files exceed the budget; listing stops there.
Result<std::vector<Listed>, DumpDirError> ListDumpFiles(const std::string& dir, const ReadLimits& limits) {
  struct Found {
    std::string path;
    dev_t dev;
    ino_t ino;
    uint64_t size;
  };
  std::vector<Found> found;
  std::set<std::pair<dev_t, ino_t>> counted;
  uint64_t total = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    std::string name = p.filename().string();
    if (name.empty() || name[0] == '.' || p.extension() != ".json") continue;
    struct stat st;
    if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // follows symlinks
    found.push_back(Found{p.string(), st.st_dev, st.st_ino, static_cast<uint64_t>(st.st_size)});
    if (!counted.insert({st.st_dev, st.st_ino}).second) continue;
    total += Charge(found.back().size);
    if (total > limits.budget_bytes) {
      return DumpDirError{dir + ": the dumps exceed the input budget of " + FormatBudget(limits.budget_bytes) +
                              " at file " + std::to_string(counted.size()) + " (" + p.string() + ")",
                          true};
    }
  }
  if (ec) return DumpDirError{dir + ": cannot list: " + ec.message()};
  // Of several names of one file, the first in path order is read.
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.path < b.path; });
  std::set<std::pair<dev_t, ino_t>> taken;
  std::vector<Listed> files;
  for (auto& f : found) {
    if (taken.insert({f.dev, f.ino}).second) {
      files.push_back(Listed{std::move(f.path), std::min<uint64_t>(f.size, kMaxDumpBytes)});
    }
  }
  return files;
}

// Parsing dominates the analysis of big jobs, and files are independent: spread them
// over the cores.
DumpSet ReadAll(const std::vector<Listed>& files) {
  std::vector<std::optional<Result<RankDump>>> read(files.size());
  size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  workers = std::min(workers, std::max<size_t>(1, files.size() / 16));
  std::atomic<size_t> next{0};
  std::mutex big_file;
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      const Listed& f = files[i];
      std::unique_lock<std::mutex> serial(big_file, std::defer_lock);
      if (f.admitted > kSerialParseBytes) serial.lock();
      read[i].emplace(ReadDumpFileWithin(f.path, f.admitted));
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  DumpSet set;
  for (size_t i = 0; i < files.size(); ++i) {
    Result<RankDump>& one = *read[i];
    if (one.ok()) {
      set.dumps.push_back(LoadedDump{files[i].path, std::move(one).value()});
    } else {
      set.rejected.push_back(RejectedFile{files[i].path, one.error().message()});
    }
    read[i].reset();
  }
  return set;
}

}  // namespace

Result<RankDump> ReadDumpFile(const std::string& path) noexcept { return ReadDumpFileWithin(path, kMaxDumpBytes); }

Result<DumpSet, DumpDirError> ReadDumpDir(const std::string& dir, const ReadLimits& limits) noexcept {
  try {
    std::error_code ec;
    if (!fs::exists(dir, ec)) return DumpDirError{dir + ": no such directory"};
    if (!fs::is_directory(dir, ec)) return DumpDirError{dir + ": not a directory"};
    Result<std::vector<Listed>, DumpDirError> files = ListDumpFiles(dir, limits);
    if (!files.ok()) return files.error();
    return ReadAll(*files);
  } catch (const std::exception& e) {  // out of memory, or the file system's own error
    return DumpDirError{dir + ": " + e.what()};
  }
}

}  // namespace ncclwatch::dump
