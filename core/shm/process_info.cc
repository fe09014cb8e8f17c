#include "core/shm/process_info.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace ncclwatch::shm {
namespace {

// Reads /proc/<pid>/stat with raw system calls: no allocation beyond the string, usable
// after fork.
bool ReadProcStat(pid_t pid, char* buffer, size_t size) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, buffer, size - 1);
  close(fd);
  if (n <= 0) return false;
  buffer[n] = '\0';
  return true;
}

// Returns the text after the command name, which may itself contain spaces and ')'.
const char* AfterCommandName(const char* stat) {
  const char* close_paren = std::strrchr(stat, ')');
  return close_paren == nullptr ? nullptr : close_paren + 1;
}

// Field 3 (state) of a /proc/<pid>/stat text, 0 if absent.
char StateOf(const char* stat) {
  const char* cursor = AfterCommandName(stat);
  if (cursor == nullptr) return 0;
  while (*cursor == ' ') ++cursor;
  return *cursor;
}

// Field 22 (starttime) of a /proc/<pid>/stat text, 0 if absent.
uint64_t StartTicksOf(const char* stat) {
  const char* cursor = AfterCommandName(stat);
  if (cursor == nullptr) return 0;
  // After ")" come fields 3 (state) .. 22 (starttime): skip 19 fields.
  for (int field = 3; field < 22; ++field) {
    while (*cursor == ' ') ++cursor;
    while (*cursor != ' ' && *cursor != '\0') ++cursor;
  }
  return std::strtoull(cursor, nullptr, 10);
}

}  // namespace

uint64_t ProcessStartTicks(pid_t pid) {
  char stat[1024];
  if (!ReadProcStat(pid, stat, sizeof(stat))) return 0;
  return StartTicksOf(stat);
}

ProcessLook LookAtProcess(pid_t pid, uint64_t start_ticks) {
  if (pid <= 0) return {};
  // The caller itself runs: no /proc read. The watchdog asks this of every segment of its
  // job at every poll; this process's start ticks are read once (a fork's child reads its own).
  static std::atomic<pid_t> self_pid{0};
  static std::atomic<uint64_t> self_start_ticks{0};
  const pid_t self = getpid();
  if (pid == self) {
    if (self_pid.load(std::memory_order_acquire) != self) {
      self_start_ticks.store(ProcessStartTicks(self), std::memory_order_relaxed);
      self_pid.store(self, std::memory_order_release);
    }
    return {self_start_ticks.load(std::memory_order_relaxed) == start_ticks, 0};
  }
  // One read gives both the state and the start time.
  char stat[1024];
  if (!ReadProcStat(pid, stat, sizeof(stat))) return {};
  const char state = StateOf(stat);
  if (state == 0 || state == 'Z' || state == 'X') return {};
  if (StartTicksOf(stat) != start_ticks) return {};
  return {true, state};
}

bool ProcessIsAlive(pid_t pid, uint64_t start_ticks) { return LookAtProcess(pid, start_ticks).alive; }

std::string BootId() {
  char id[64] = {};
  const int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  const ssize_t n = read(fd, id, sizeof(id) - 1);
  close(fd);
  if (n <= 0) return "";
  std::string text(id, static_cast<size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

ProcessLook LookAtProcessOfBoot(const char* boot_id, size_t boot_id_bytes, pid_t pid, uint64_t start_ticks) {
  // Read once: the boot id cannot change while we run.
  static const std::string* const kThisBoot = new std::string(BootId());
  const std::string theirs(boot_id, strnlen(boot_id, boot_id_bytes));
  if (theirs.empty() || theirs != *kThisBoot) return {};
  return LookAtProcess(pid, start_ticks);
}

bool ProcessOfBootIsAlive(const char* boot_id, size_t boot_id_bytes, pid_t pid, uint64_t start_ticks) {
  return LookAtProcessOfBoot(boot_id, boot_id_bytes, pid, start_ticks).alive;
}

uint64_t StartTicksToUnixNs(uint64_t start_ticks) {
  const long ticks_per_sec = sysconf(_SC_CLK_TCK);
  timespec boot{}, wall{};
  if (ticks_per_sec <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0 || clock_gettime(CLOCK_REALTIME, &wall) != 0) {
    return 0;
  }
  // /proc's start time counts from boot, suspend included: CLOCK_BOOTTIME's origin.
  const auto ns = [](const timespec& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
  };
  const uint64_t since_boot = start_ticks / static_cast<uint64_t>(ticks_per_sec) * 1000000000ull +
                              start_ticks % static_cast<uint64_t>(ticks_per_sec) * 1000000000ull /
                                  static_cast<uint64_t>(ticks_per_sec);
  const uint64_t age = ns(boot) > since_boot ? ns(boot) - since_boot : 0;
  return ns(wall) > age ? ns(wall) - age : 0;
}

namespace {

// The whole of a small /proc file, bounded; "" when unreadable.
std::string ReadProcFile(pid_t pid, const char* name, size_t limit) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/%s", static_cast<int>(pid), name);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buffer[4096];
  ssize_t n;
  while (text.size() < limit && (n = read(fd, buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<size_t>(std::min<size_t>(static_cast<size_t>(n), limit - text.size())));
  }
  close(fd);
  return text;
}

}  // namespace

OsState ReadOsState(pid_t pid, char state) {
  OsState out;
  if (pid <= 0) return out;
  if (state == 0) {
    char stat[1024];
    if (!ReadProcStat(pid, stat, sizeof(stat))) return out;
    state = StateOf(stat);
  }
  out.state = state;
  if (out.state != 'D' && out.state != 'T' && out.state != 't') return out;
  out.wchan = ReadProcFile(pid, "wchan", 256);
  if (out.wchan == "0") out.wchan.clear();
  if (out.state != 'D') return out;
  // "[<0>] nv_wait_for_completion+0x1c/0x40 [nvidia]" per line: the function and module.
  const std::string stack = ReadProcFile(pid, "stack", 16 * 1024);
  size_t start = 0;
  while (start < stack.size() && out.kernel_stack.size() < 32) {
    size_t end = stack.find('\n', start);
    if (end == std::string::npos) end = stack.size();
    std::string line = stack.substr(start, end - start);
    const size_t bracket = line.find("] ");
    if (bracket != std::string::npos) line = line.substr(bracket + 2);
    if (!line.empty()) out.kernel_stack.push_back(line);
    start = end + 1;
  }
  return out;
}

Mapping SegmentMappedBy(pid_t pid, const std::string& entry) {
  constexpr size_t kMapsLimit = 16u << 20;  // a torch process maps ~2,000 ranges, ~300 KiB
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/maps", static_cast<int>(pid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Mapping::kUnknown;
  const std::string needle = " /dev/shm/" + entry + "\n";
  std::string window;  // the unread tail of the previous chunk, so a line split across reads is seen
  char buffer[65536];
  size_t total = 0;
  ssize_t n;
  bool read_error = false;
  while (total < kMapsLimit) {
    n = read(fd, buffer, sizeof buffer);
    if (n < 0) {
      read_error = true;
      break;
    }
    if (n == 0) break;
    total += static_cast<size_t>(n);
    window.append(buffer, static_cast<size_t>(n));
    if (window.find(needle) != std::string::npos) {
      close(fd);
      return Mapping::kMapped;
    }
    if (window.size() > needle.size()) window.erase(0, window.size() - needle.size());
  }
  close(fd);
  return read_error || total >= kMapsLimit ? Mapping::kUnknown : Mapping::kNotMapped;
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

}  // namespace ncclwatch::shm
