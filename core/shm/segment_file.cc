#include "core/shm/segment_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>
#include <utility>

#include "core/shm/layout.h"

namespace ncclwatch::shm {
namespace {

constexpr size_t kMaxRememberedWarnings = 4096;

void WriteToStderr(const std::string& line) { std::fprintf(stderr, "ncclwatch: %s\n", line.c_str()); }

std::mutex g_warn_mu;
SegmentWarningSink g_sink = &WriteToStderr;                // guarded by g_warn_mu
std::set<std::pair<std::string, ino_t>>* g_warned = nullptr;  // never freed: readers may run at exit

double SecondsSince(const timespec& then) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec - then.tv_sec) + static_cast<double>(now.tv_nsec - then.tv_nsec) / 1e9;
}

// Why the inode is not one of our segments; empty when it is.
std::string InodeProblem(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_uid != geteuid()) {
    return "owned by uid " + std::to_string(st.st_uid) + ", not by us (uid " + std::to_string(geteuid()) + ")";
  }
  if ((st.st_mode & 07777) != 0600) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string("mode ") + mode + ", not 0600";
  }
  return "";
}

}  // namespace

bool SegmentRejection::Reportable() const {
  return problem == SegmentProblem::kRejected || (problem == SegmentProblem::kIncomplete && age_sec > kIncompleteGraceSec);
}

Result<SegmentFile, SegmentRejection> SegmentFile::Open(const std::string& entry) {
  const std::string path = "/dev/shm/" + entry;
  SegmentRejection rejection;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    rejection.problem = errno == ENOENT ? SegmentProblem::kMissing : SegmentProblem::kRejected;
    rejection.why = "ignoring " + path + ": " + (errno == ELOOP ? "a symlink" : "cannot be opened");
    return rejection;
  }
  struct stat st {};
  const std::string bad = fstat(fd, &st) != 0 ? "fstat failed" : InodeProblem(st);
  rejection.inode = st.st_ino;
  rejection.age_sec = SecondsSince(st.st_ctim);
  if (bad.empty() && st.st_size >= static_cast<off_t>(kHeaderBytes)) {
    return SegmentFile(fd, static_cast<uint64_t>(st.st_size), st.st_ino, rejection.age_sec);
  }
  ::close(fd);
  rejection.problem = bad.empty() ? SegmentProblem::kIncomplete : SegmentProblem::kRejected;
  rejection.why = "ignoring " + path + ": " +
                  (bad.empty() ? std::to_string(st.st_size) + " bytes, shorter than a segment header" : bad);
  return rejection;
}

SegmentFile::SegmentFile(SegmentFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), inode_(other.inode_), age_sec_(other.age_sec_) {}

SegmentFile::~SegmentFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool SegmentFile::Read(uint64_t offset, void* out, size_t bytes) const {
  if (offset > size_ || bytes > size_ - offset) return false;
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd_, static_cast<char*>(out) + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // shrunk under us, or an I/O error
    done += static_cast<size_t>(n);
  }
  return true;
}

void SetSegmentWarningSink(SegmentWarningSink sink) {
  std::lock_guard<std::mutex> lock(g_warn_mu);
  g_sink = sink != nullptr ? sink : &WriteToStderr;
}

void WarnAboutSegmentOnce(const std::string& entry, ino_t inode, const std::string& why) {
  SegmentWarningSink sink;
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(g_warn_mu);
    if (g_warned == nullptr) g_warned = new std::set<std::pair<std::string, ino_t>>();
    if (g_warned->size() >= kMaxRememberedWarnings) return;
    if (!g_warned->emplace(entry, inode).second) return;
    sink = g_sink;
    last = g_warned->size() == kMaxRememberedWarnings;
  }
  sink(why + (last ? " (further bad segments are not reported)" : ""));
}

bool ReadSegmentHeader(const SegmentFile& file, SegmentHeader* header) {
  constexpr int kAttempts = 16;
  constexpr size_t kFixedBytes = offsetof(SegmentHeader, global_rank);
  SegmentHeader second;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (!file.Read(0, header, sizeof *header) || !file.Read(0, &second, sizeof second)) return false;
    if (std::memcmp(header, &second, kFixedBytes) == 0) return true;
  }
  return false;
}

}  // namespace ncclwatch::shm
