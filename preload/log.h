// Diagnostics of the preload, on stderr, prefixed "[ncclwatch <pid>]".
// NCCLWATCH_LOG_LEVEL: off | error | warn (default) | info | debug.
#ifndef NCCLWATCH_PRELOAD_LOG_H_
#define NCCLWATCH_PRELOAD_LOG_H_

#include <string>

namespace ncclwatch::preload {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

// Reads NCCLWATCH_LOG_LEVEL; called once at activation.
void InitLogging();
bool LogEnabled(LogLevel level);
void Log(LogLevel level, const std::string& message);
// Logs `line` as is, without the "[ncclwatch <pid>]" prefix: the incident line carries
// its own NCCL-like "<host>:<pid>:<tid> [rank R] NCCLWATCH WARN" prefix.
void LogRawLine(LogLevel level, const std::string& line);

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_LOG_H_
