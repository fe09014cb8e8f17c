// The one-line error every subcommand prints on stderr: "ncclwatch <command>: <message>".
#ifndef NCCLWATCH_TOOLS_CLI_ERROR_LINE_H_
#define NCCLWATCH_TOOLS_CLI_ERROR_LINE_H_

#include <string>

namespace ncclwatch::tools {

// `message` is escaped (format::EscapeForTerminal): it often quotes paths, fields and values
// from dumps, which must neither break the line nor control the terminal.
void PrintErrorLine(const char* command, const std::string& message);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_CLI_ERROR_LINE_H_
