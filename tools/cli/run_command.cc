// ncclwatch run [options] -- CMD...
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/cli/cli_checks.h"
#include "tools/cli/commands.h"
#include "tools/cli/error_line.h"
#include "tools/cli/exit_status.h"
#include "tools/exporter/exporter_options.h"
#include "tools/cli/run_metrics.h"

namespace ncclwatch::tools {
namespace {

struct RunOptions {
  std::optional<double> stall_sec;
  std::optional<int> poll_ms;
  std::string dump_dir;
  std::string job_id;
  std::string log_level;
  std::string metrics;  // ADDR:PORT for an exporter; empty: none
  std::vector<std::string> command;
};

// The preload sits in ../lib relative to the real ncclwatch binary (symlinks resolved).
std::string PreloadLibraryPath() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return (exe.parent_path().parent_path() / "lib" / "libncclwatch.so").string();
}

std::string FormatSeconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", seconds);
  return buf;
}

bool SetEnv(const char* name, const std::string& value) {
  if (::setenv(name, value.c_str(), 1) == 0) return true;
  std::fprintf(stderr, "ncclwatch run: cannot set %s: %s\n", name, std::strerror(errno));
  return false;
}

int RunCommand(const RunOptions& options, const std::string& existing) {
  std::string library = PreloadLibraryPath();
  if (library.empty() || ::access(library.c_str(), R_OK) != 0) {
    PrintErrorLine("run", "preload library not found at " + library + " (build the ncclwatch target)");
    return kExitUsage;
  }
  // Before the environment below is set: the exporter needs neither the preload nor the
  // job's settings.
  if (!options.metrics.empty()) StartExporterUnlessListening(options.metrics, options.dump_dir);
  std::string preload = library + (existing.empty() ? "" : ":" + existing);
  bool ok = SetEnv("LD_PRELOAD", preload);
  if (options.stall_sec) ok = ok && SetEnv("NCCLWATCH_STALL_SEC", FormatSeconds(*options.stall_sec));
  if (options.poll_ms) ok = ok && SetEnv("NCCLWATCH_POLL_MS", std::to_string(*options.poll_ms));
  if (!options.dump_dir.empty()) ok = ok && SetEnv("NCCLWATCH_DUMP_DIR", options.dump_dir);
  if (!options.job_id.empty()) ok = ok && SetEnv("NCCLWATCH_JOB_ID", options.job_id);
  if (!options.log_level.empty()) ok = ok && SetEnv("NCCLWATCH_LOG_LEVEL", options.log_level);
  if (!ok) return kExitUsage;
  std::vector<char*> argv;
  for (const auto& arg : options.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  const int exec_errno = errno;  // before any allocation below may change it
  PrintErrorLine("run", "cannot execute " + options.command.front() + ": " + std::strerror(exec_errno));
  return kExitExecFailed;
}

}  // namespace

void AddRunCommand(CLI::App& app, const settings::Settings& settings, int* exit_status) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run CMD with libncclwatch.so preloaded and NCCLWATCH_* settings");
  cmd->add_option("--stall", options->stall_sec, "Seconds without progress before an incident (NCCLWATCH_STALL_SEC)")
      ->check(Positive());
  cmd->add_option("--poll-ms", options->poll_ms, "Watchdog poll period in ms (NCCLWATCH_POLL_MS)")
      ->check(Positive());
  cmd->add_option("--dump-dir", options->dump_dir, "Directory for hang dumps (NCCLWATCH_DUMP_DIR)");
  cmd->add_option("--job-id", options->job_id, "Job id shared by all ranks (NCCLWATCH_JOB_ID)");
  cmd->add_option("--log-level", options->log_level, "Log level of the preload (NCCLWATCH_LOG_LEVEL)")
      ->check(CLI::IsMember({"debug", "info", "warn", "error", "off"}));
  cmd->add_option("--metrics", options->metrics,
                  "Also start `ncclwatch exporter --listen ADDR:PORT` for the job unless something already "
                  "answers there; it ends with CMD");
  cmd->add_option("CMD", options->command, "Command to run; put it after -- when it has options")->required();
  cmd->footer(
      "LD_PRELOAD gets ../lib/libncclwatch.so (relative to this binary) prepended to any existing value.\n"
      "Example: ncclwatch run --stall 30 --dump-dir /shared/dumps -- torchrun --nproc-per-node 8 train.py\n"
      "Exit status: that of CMD; 2 bad usage or missing preload library; 127 CMD could not be executed.");
  cmd->callback([options, &settings, exit_status] {
    if (const Status metrics = options->metrics.empty() ? OkStatus() : ValidateListen(options->metrics, "--metrics");
        !metrics.ok()) {
      std::fprintf(stderr, "ncclwatch run: %s (see --help)\n", metrics.message().c_str());
      *exit_status = kExitUsage;
      return;
    }
    *exit_status = RunCommand(*options, settings.ld_preload);
  });
}

}  // namespace ncclwatch::tools
