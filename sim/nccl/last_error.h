// ncclGetLastError text and NCCL_DEBUG-style logging.
#ifndef NCCLWATCH_SIM_NCCL_LAST_ERROR_H_
#define NCCLWATCH_SIM_NCCL_LAST_ERROR_H_

#include <string>

namespace ncclsim {

void SetLastError(const std::string& message);
const char* LastError();

// The NCCL_DEBUG settings are read at the first question and kept, as real NCCL keeps them,
// until ResetDebugConfig (ncclResetDebugInit); unlike NCCL, a forked child reads them again.
void ResetDebugConfig();
// True when NCCL_DEBUG is INFO (or TRACE), as in real NCCL.
bool DebugInfoEnabled();
// True when NCCL_DEBUG is INFO (or TRACE) and NCCL_DEBUG_SUBSYS selects `subsys` (e.g. "COLL").
// As in real NCCL: a comma-separated, case-insensitive list, "ALL" for every subsystem, a leading
// '^' inverts the list, and the default is INIT,BOOTSTRAP,ENV (so COLL is off unless asked for).
bool DebugSubsysEnabled(const char* subsys);
// True when NCCL_DEBUG is WARN, INFO or TRACE.
bool DebugWarnEnabled();
// Print "<host>:<pid>:<tid> [<dev>] NCCL INFO|WARN <message>" to stdout, as NCCL does.
void DebugInfo(int device, const std::string& message);
void DebugWarn(int device, const std::string& message);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_LAST_ERROR_H_
