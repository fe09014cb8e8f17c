// A program started for a test and kept running (blocked on its stdin, which the fake apps
// read until it closes) until destroyed: then its stdin closes, it gets SIGKILL and is
// reaped, so no test leaves a process behind.
#ifndef NCCLWATCH_TESTS_TOOLS_CLI_RUNNING_APP_H_
#define NCCLWATCH_TESTS_TOOLS_CLI_RUNNING_APP_H_

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace ncclwatch::testing {

class RunningApp {
 public:
  // argv[0] is a path; `env` is set on top of the test's environment.
  RunningApp(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      dup2(fds[0], 0);
      close(fds[1]);
      for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
      std::vector<char*> args;
      for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(126);
    }
    close(fds[0]);
    stdin_ = fds[1];
  }
  ~RunningApp() {
    close(stdin_);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  RunningApp(const RunningApp&) = delete;
  RunningApp& operator=(const RunningApp&) = delete;

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
};

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_TOOLS_CLI_RUNNING_APP_H_
