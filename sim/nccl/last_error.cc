#include "last_error.h"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <mutex>
#include <sys/syscall.h>
#include <unistd.h>

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

bool DebugInfoEnabled() {
  const char* v = std::getenv("NCCL_DEBUG");
  return v != nullptr && (strcasecmp(v, "INFO") == 0 || strcasecmp(v, "TRACE") == 0);
}

bool DebugSubsysEnabled(const char* subsys) {
  if (!DebugInfoEnabled()) return false;
  const char* env = std::getenv("NCCL_DEBUG_SUBSYS");
  std::string list = env != nullptr ? env : "INIT,BOOTSTRAP,ENV";
  const bool invert = !list.empty() && list[0] == '^';
  if (invert) list.erase(0, 1);
  bool listed = false;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, end - start);
    if (strcasecmp(item.c_str(), subsys) == 0 || strcasecmp(item.c_str(), "ALL") == 0) listed = true;
    start = end + 1;
  }
  return listed != invert;
}

bool DebugWarnEnabled() {
  const char* v = std::getenv("NCCL_DEBUG");
  return DebugInfoEnabled() || (v != nullptr && strcasecmp(v, "WARN") == 0);
}

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
