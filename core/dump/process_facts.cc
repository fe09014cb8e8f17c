#include "core/dump/process_facts.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>

namespace ncclwatch::dump {
namespace {

uint64_t Now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The first token shaped like "545.23.08" or "535.154".
std::string FirstVersionToken(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    std::string token = text.substr(start, i - start);
    size_t dot = token.find('.');
    bool bounded = (start == 0 || std::isspace(static_cast<unsigned char>(text[start - 1]))) &&
                   (i == text.size() || std::isspace(static_cast<unsigned char>(text[i])));
    if (bounded && dot != std::string::npos && dot >= 3 && dot + 1 < token.size() && token.back() != '.') {
      return token;
    }
    if (i == start) ++i;
  }
  return "";
}

}  // namespace

std::string FormatIso8601Utc(uint64_t unix_ns) {
  time_t seconds = static_cast<time_t>(unix_ns / 1000000000ull);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09lluZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<unsigned long long>(unix_ns % 1000000000ull));
  return buf;
}

std::string ReadNvidiaDriverVersion(const std::string& path) noexcept {
  try {
    return FirstVersionToken(ReadFile(path));
  } catch (const std::exception&) {  // out of memory: no version rather than none at all
    return "";
  }
}

Instant NowInstant() noexcept {
  Instant now;
  now.mono_ns = Now(CLOCK_MONOTONIC);
  now.unix_ns = Now(CLOCK_REALTIME);
  try {
    now.iso = FormatIso8601Utc(now.unix_ns);
  } catch (const std::exception&) {  // out of memory: the instant without its text
  }
  return now;
}

void StampDetectionTime(Incident* incident) noexcept {
  Instant now = NowInstant();
  incident->detected_mono_ns = now.mono_ns;
  incident->detected_unix_ns = now.unix_ns;
  incident->detected_iso = std::move(now.iso);
}

void FillProcessFacts(const std::map<std::string, std::string>& nccl_env, RankDump* dump) noexcept {
  try {
    ProcessInfo& p = dump->process;
    p.pid = static_cast<int32_t>(::getpid());
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) p.host = host;
    char exe[4096];
    ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe);
    if (n > 0) p.exe.assign(exe, static_cast<size_t>(n));
    std::string cmdline = ReadFile("/proc/self/cmdline");
    p.cmdline.clear();
    for (size_t start = 0; start < cmdline.size();) {
      size_t end = cmdline.find('\0', start);
      if (end == std::string::npos) end = cmdline.size();
      p.cmdline.push_back(cmdline.substr(start, end - start));
      start = end + 1;
    }
    Environment& e = dump->environment;
    e.nccl_env = nccl_env;
    utsname u{};
    if (::uname(&u) == 0) e.kernel_release = u.release;
    e.nvidia_driver = ReadNvidiaDriverVersion();
  } catch (const std::exception&) {
    // Out of memory while collecting: the dump goes out with what was gathered.
  }
}

}  // namespace ncclwatch::dump
