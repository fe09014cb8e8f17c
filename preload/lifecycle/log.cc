#include "preload/lifecycle/log.h"

#include <unistd.h>

#include <atomic>
#include <memory>

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "core/format/escape.h"

namespace ncclwatch::preload {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kOff: return spdlog::level::off;
  }
  return spdlog::level::warn;
}

// Not registered in spdlog's global registry: the host process may use spdlog too.
spdlog::logger* NewStderrLogger(const char* name, const char* pattern) {
  auto* logger = new spdlog::logger(name, std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern(pattern);
  logger->set_level(spdlog::level::trace);
  return logger;
}

spdlog::logger& Logger() {
  static spdlog::logger* logger = NewStderrLogger("ncclwatch", "[ncclwatch %P] %l: %v");
  return *logger;
}

spdlog::logger& RawLogger() {
  static spdlog::logger* logger = NewStderrLogger("ncclwatch-raw", "%v");
  return *logger;
}

}  // namespace

void InitLogging(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(std::memory_order_relaxed); }

void Log(LogLevel level, const std::string& message) {
  if (!LogEnabled(level)) return;
  try {
    Logger().log(ToSpdlog(level), format::EscapeForTerminal(message));
  } catch (...) {  // called from hooks and the watchdog's thread (C ABI, thread entry): a lost line
    // Logging must never take the host down.
  }
}

void LogRawLine(LogLevel level, const std::string& line) {
  if (!LogEnabled(level)) return;
  try {
    RawLogger().log(ToSpdlog(level), format::EscapeForTerminal(line));
  } catch (...) {  // as Log's: never out of a hook or the watchdog's thread
  }
}

}  // namespace ncclwatch::preload
