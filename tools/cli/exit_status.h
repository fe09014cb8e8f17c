// Exit statuses of `ncclwatch`, part of its interface (documented in tools/README.md).
#ifndef NCCLWATCH_TOOLS_CLI_EXIT_STATUS_H_
#define NCCLWATCH_TOOLS_CLI_EXIT_STATUS_H_

namespace ncclwatch::tools {

inline constexpr int kExitOk = 0;           // success; for analyze: no verdict in any run it read
inline constexpr int kExitUsage = 2;        // bad usage or unusable input
inline constexpr int kExitIncident = 3;     // analyze: a hang/incident verdict that did not resolve
inline constexpr int kExitResolved = 4;     // analyze: verdicts, every one resolved (slow, not hung)
inline constexpr int kExitExecFailed = 127; // run: CMD could not be executed

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_CLI_EXIT_STATUS_H_
