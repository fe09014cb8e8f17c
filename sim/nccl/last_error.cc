#include "last_error.h"

#include <pthread.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace ncclsim {
namespace {

std::mutex g_mu;
std::string g_last;
thread_local std::string t_copy;

}  // namespace

void SetLastError(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_last = message;
}

const char* LastError() {
  std::lock_guard<std::mutex> lock(g_mu);
  t_copy = g_last;  // stays valid for the calling thread until its next call
  return t_copy.c_str();
}

namespace {

// NCCL_DEBUG and NCCL_DEBUG_SUBSYS, read once as real NCCL does (ncclDebugInit), and again
// after ncclResetDebugInit: the sim asks on every op, and a getenv per op scanned the whole
// environment, whose length then set part of every op's cost (one more variable, such as
// LD_PRELOAD, cost a group of one op about 4 ns: scripts/bench --only hooks).
// Unlike NCCL, a forked child reads them afresh: the tests set NCCL_DEBUG in a forked child
// before its first call, or in the parent just before forking its ranks.
struct DebugConfig {
  bool info = false;
  bool warn = false;
  bool subsys_inverted = false;
  std::vector<std::string> subsys;  // NCCL_DEBUG_SUBSYS's items, '^' removed
};

DebugConfig ReadDebugConfig() {
  DebugConfig config;
  const char* level = std::getenv("NCCL_DEBUG");
  config.info = level != nullptr && (strcasecmp(level, "INFO") == 0 || strcasecmp(level, "TRACE") == 0);
  config.warn = config.info || (level != nullptr && strcasecmp(level, "WARN") == 0);
  const char* env = std::getenv("NCCL_DEBUG_SUBSYS");
  std::string list = env != nullptr ? env : "INIT,BOOTSTRAP,ENV";
  config.subsys_inverted = !list.empty() && list[0] == '^';
  if (config.subsys_inverted) list.erase(0, 1);
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    config.subsys.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return config;
}

std::atomic<const DebugConfig*> g_debug_config{nullptr};
std::once_flag g_debug_atfork;

const DebugConfig& Debug() {
  const DebugConfig* config = g_debug_config.load(std::memory_order_acquire);
  if (config != nullptr) [[likely]] return *config;
  std::call_once(g_debug_atfork, [] {
    // The parent's copy stays with the parent (a child that never asks leaks nothing).
    pthread_atfork(nullptr, nullptr, [] { g_debug_config.store(nullptr, std::memory_order_relaxed); });
  });
  const DebugConfig* fresh = new DebugConfig(ReadDebugConfig());
  const DebugConfig* expected = nullptr;
  if (g_debug_config.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;
  return *expected;
}

}  // namespace

void ResetDebugConfig() { g_debug_config.store(nullptr, std::memory_order_release); }

bool DebugInfoEnabled() { return Debug().info; }

bool DebugSubsysEnabled(const char* subsys) {
  const DebugConfig& config = Debug();
  if (!config.info) return false;
  bool listed = false;
  for (const std::string& item : config.subsys) {
    if (strcasecmp(item.c_str(), subsys) == 0 || strcasecmp(item.c_str(), "ALL") == 0) listed = true;
  }
  return listed != config.subsys_inverted;
}

bool DebugWarnEnabled() { return Debug().warn; }

namespace {

// The host name (up to the first dot), pid and tid, as NCCL's debug lines start: on a
// cluster these say which host and process a line came from.
void DebugLine(int device, const char* level, const std::string& message) {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  if (char* dot = std::strchr(host, '.')) *dot = '\0';
  std::printf("%s:%d:%ld [%d] NCCL %s %s\n", host, static_cast<int>(getpid()),
              static_cast<long>(syscall(SYS_gettid)), device, level, message.c_str());
  std::fflush(stdout);
}

}  // namespace

void DebugInfo(int device, const std::string& message) { DebugLine(device, "INFO", message); }

void DebugWarn(int device, const std::string& message) { DebugLine(device, "WARN", message); }

}  // namespace ncclsim
