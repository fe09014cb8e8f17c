#include "core/stacks/task_list.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace ncclwatch::stacks_internal {
namespace {

std::string TaskFile(pid_t tid, const char* leaf) {
  return "/proc/self/task/" + std::to_string(tid) + "/" + leaf;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

std::vector<pid_t> ListThreadIds() {
  std::vector<pid_t> tids;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return tids;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    long tid = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && tid > 0) tids.push_back(static_cast<pid_t>(tid));
  }
  closedir(dir);
  return tids;
}

std::string ReadThreadName(pid_t tid) {
  std::string name = ReadWholeFile(TaskFile(tid, "comm"));
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

char ReadThreadState(pid_t tid) {
  // The name field is parenthesised and may itself contain ") ", so the state
  // is the first letter after the last ')'.
  std::string stat = ReadWholeFile(TaskFile(tid, "stat"));
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return '?';
  return stat[close + 2];
}

bool IsSignalBlocked(pid_t tid, int signal_number) {
  std::ifstream status(TaskFile(tid, "status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("SigBlk:", 0) != 0) continue;
    unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
    return signal_number >= 1 && signal_number <= 64 && ((mask >> (signal_number - 1)) & 1) != 0;
  }
  return false;
}

}  // namespace ncclwatch::stacks_internal
