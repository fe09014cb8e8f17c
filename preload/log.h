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

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_LOG_H_
