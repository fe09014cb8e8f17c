// ncclwatch status [--job ID] [--json] [--watch]
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/format/escape.h"
#include "core/clock/monotonic.h"
#include "core/shm/reader.h"
#include "tools/cli/cli_checks.h"
#include "tools/cli/commands.h"
#include "tools/cli/exit_status.h"
#include "tools/cli/status_table.h"

#include <nlohmann/json.hpp>

namespace ncclwatch::tools {
namespace {

struct StatusOptions {
  std::string job;
  bool watch = false;
  bool json = false;
  double interval_sec = 1.0;
  int iterations = 0;  // with --watch: stop after this many refreshes; 0 = until interrupted
};

volatile sig_atomic_t g_stop = 0;
void RequestStop(int) { g_stop = 1; }

// Empty when there is nothing to show. JSON: one object {"jobs": [...]} per snapshot, one line.
std::string Render(const StatusOptions& options) {
  std::vector<std::string> jobs = options.job.empty() ? shm::ListJobIds() : std::vector<std::string>{options.job};
  std::string out;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& job : jobs) {
    shm::JobSnapshot snapshot = shm::ReadJobSnapshot(job);
    if (snapshot.processes.empty()) continue;
    if (options.json) {
      all.push_back(StatusJson(snapshot, clock::MonotonicNowNs()));
    } else {
      out += RenderStatusTable(snapshot, clock::MonotonicNowNs()) + "\n";
    }
  }
  if (options.json && !all.empty()) {
    out = nlohmann::json{{"schema", "ncclwatch.status"}, {"version", 1}, {"jobs", std::move(all)}}.dump(
              -1, ' ', false, nlohmann::json::error_handler_t::replace) +
          "\n";
  }
  return out;
}

int RunStatus(const StatusOptions& options) {
  std::string no_job = options.job.empty()
                           ? "no ncclwatch job on this host\n"
                           : "no process of job " + format::EscapeForTerminal(options.job) + " on this host\n";
  if (!options.watch) {
    std::string table = Render(options);
    if (table.empty()) {
      std::fprintf(stderr, "ncclwatch status: %s", no_job.c_str());
      return kExitUsage;
    }
    std::fputs(table.c_str(), stdout);
    return kExitOk;
  }
  signal(SIGINT, RequestStop);
  signal(SIGTERM, RequestStop);
  const bool on_terminal = isatty(STDOUT_FILENO) != 0 && !options.json;
  for (int i = 0; !g_stop && (options.iterations == 0 || i < options.iterations); ++i) {
    if (i > 0) {
      timespec pause{static_cast<time_t>(options.interval_sec),
                     static_cast<long>((options.interval_sec - static_cast<time_t>(options.interval_sec)) * 1e9)};
      nanosleep(&pause, nullptr);
      if (g_stop) break;
    }
    std::string table = Render(options);
    if (on_terminal) {
      // Home the cursor and clear the screen so the table refreshes in place.
      std::printf("\033[H\033[2J%s", table.empty() ? no_job.c_str() : table.c_str());
    } else {
      // Into a pipe or a file: plain snapshots one after another, no terminal escapes.
      std::printf("%s%s", i > 0 && !options.json ? "\n" : "", table.empty() ? no_job.c_str() : table.c_str());
    }
    std::fflush(stdout);
  }
  return kExitOk;
}

}  // namespace

void AddStatusCommand(CLI::App& app, int* exit_status) {
  auto options = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand("status", "Live table of this host's ranks, from shared memory alone");
  cmd->add_option("--job", options->job, "Job id (NCCLWATCH_JOB_ID, TORCHELASTIC_RUN_ID, ...); default: every job");
  cmd->add_flag("--watch", options->watch,
                "Refresh until interrupted: in place on a terminal, as successive snapshots into a pipe");
  cmd->add_flag("--json", options->json,
                "One JSON object per snapshot (schema ncclwatch.status v1, exact numbers; tools/README.md)");
  cmd->add_option("--interval", options->interval_sec, "Seconds between refreshes with --watch (default 1)")
      ->check(Positive());
  cmd->add_option("--iterations", options->iterations, "With --watch, stop after N refreshes (0: never)")
      ->check(NonNegative());
  cmd->footer(
      "Columns: RANK PID COMM RANK/N ENQ (last enqueued #) DONE (last completed #) CURRENT (oldest\n"
      "collective in flight) AGE (time in flight, else since last completion) STATE; a row an incident\n"
      "is about starts with culprit:KIND or waits:KIND, and the incidents follow the table.\n"
      "Exit status: 0 shown; 2 bad usage, or no ncclwatch process of the job on this host (without --watch).");
  cmd->callback([options, exit_status] { *exit_status = RunStatus(*options); });
}

}  // namespace ncclwatch::tools
