#include "core/shm/process_info.h"

#include <fcntl.h>
#include <unistd.h>

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

bool ProcessIsAlive(pid_t pid, uint64_t start_ticks) {
  if (pid <= 0) return false;
  // The caller itself runs: no /proc read. The watchdog asks this of every segment of its
  // job at every poll, and a /proc/<pid>/stat read (the kernel formats 52 fields) was a fifth
  // of its time; this process's start ticks are read once (a fork's child reads its own).
  static std::atomic<pid_t> self_pid{0};
  static std::atomic<uint64_t> self_start_ticks{0};
  const pid_t self = getpid();
  if (pid == self) {
    if (self_pid.load(std::memory_order_acquire) != self) {
      self_start_ticks.store(ProcessStartTicks(self), std::memory_order_relaxed);
      self_pid.store(self, std::memory_order_release);
    }
    return self_start_ticks.load(std::memory_order_relaxed) == start_ticks;
  }
  // One read gives both the state and the start time.
  char stat[1024];
  if (!ReadProcStat(pid, stat, sizeof(stat))) return false;
  const char* cursor = AfterCommandName(stat);
  if (cursor == nullptr) return false;
  while (*cursor == ' ') ++cursor;
  if (*cursor == 'Z' || *cursor == 'X') return false;
  return StartTicksOf(stat) == start_ticks;
}

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

bool ProcessOfBootIsAlive(const char* boot_id, size_t boot_id_bytes, pid_t pid, uint64_t start_ticks) {
  // Read once: the boot id cannot change while we run.
  static const std::string* const kThisBoot = new std::string(BootId());
  const std::string theirs(boot_id, strnlen(boot_id, boot_id_bytes));
  if (theirs.empty() || theirs != *kThisBoot) return false;
  return ProcessIsAlive(pid, start_ticks);
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

}  // namespace ncclwatch::shm
