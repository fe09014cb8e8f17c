// Runs a command to completion with captured output and a hard deadline, for CLI tests.
// The child is killed (SIGKILL) and reaped when the deadline passes, so no test leaves a
// process behind.
#ifndef NCCLWATCH_TESTS_TOOLS_CLI_RUN_PROCESS_H_
#define NCCLWATCH_TESTS_TOOLS_CLI_RUN_PROCESS_H_

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace ncclwatch::testing {

struct ProcessResult {
  int exit_status = -1;  // -1 when killed by a signal (including the deadline)
  bool timed_out = false;
  std::string out;
  std::string err;
};

// `env` entries are set (or, with an empty value and unset=true, removed) on top of the
// test's own environment.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {},
                         std::chrono::milliseconds deadline = std::chrono::seconds(20));

// $NCCLWATCH_BUILD_DIR/bin/ncclwatch.
std::string NcclwatchBinary();

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_TOOLS_CLI_RUN_PROCESS_H_
