// Diagnostics of the preload, on stderr, prefixed "[ncclwatch <pid>]". Messages quote paths,
// job ids and values from files and other processes: control characters are escaped
// (core/format/escape.h), so a line never breaks or drives the terminal.
// The level is NCCLWATCH_LOG_LEVEL (core/settings): off | error | warn (default) | info | debug.
#ifndef NCCLWATCH_PRELOAD_LIFECYCLE_LOG_H_
#define NCCLWATCH_PRELOAD_LIFECYCLE_LOG_H_

#include <string>

#include "core/settings/settings.h"

namespace ncclwatch::preload {

using settings::LogLevel;

// Sets the level (Settings::log_level); called once at activation.
void InitLogging(LogLevel level);
bool LogEnabled(LogLevel level);
void Log(LogLevel level, const std::string& message);
// Logs `line` as is, without the "[ncclwatch <pid>]" prefix: the incident line carries
// its own NCCL-like "<host>:<pid>:<tid> [rank R] NCCLWATCH WARN" prefix.
void LogRawLine(LogLevel level, const std::string& line);

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_LIFECYCLE_LOG_H_
