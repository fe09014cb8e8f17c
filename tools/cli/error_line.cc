#include "tools/cli/error_line.h"

#include <cstdio>

#include "core/format/escape.h"

namespace ncclwatch::tools {

void PrintErrorLine(const char* command, const std::string& message) {
  std::fprintf(stderr, "ncclwatch %s: %s\n", command, format::EscapeForTerminal(message).c_str());
}

}  // namespace ncclwatch::tools
