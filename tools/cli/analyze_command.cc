// ncclwatch analyze DIR [DIR...] [--json] [--max-input-bytes SIZE]
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analyze/analyzer.h"
#include "core/analyze/report.h"
#include "core/dump/dump_reader.h"
#include "tools/cli/commands.h"
#include "tools/cli/dump_input.h"
#include "tools/cli/error_line.h"
#include "tools/cli/exit_status.h"

namespace ncclwatch::tools {
namespace {

struct AnalyzeOptions {
  std::vector<std::string> dirs;
  bool json = false;
  uint64_t budget_bytes = dump::kDefaultInputBudgetBytes;
};

// Input is unusable when there is nothing to analyse at all; a few bad files among good
// ones are listed in the report instead.
int RunAnalyze(const AnalyzeOptions& options) {
  Result<dump::DumpSet> read = ReadUsableDumps(options.dirs, options.budget_bytes);
  if (!read.ok()) {
    PrintErrorLine("analyze", read.error().message());
    return kExitUsage;
  }
  const dump::DumpSet& set = *read;
  const analyze::Analysis analysis = analyze::Analyze(set);
  if (options.json) {
    // error_handler_t::replace: a path in "rejected" may be invalid UTF-8, which the default
    // handler would throw on; JSON escapes every control character itself.
    std::string text = analyze::RenderJsonReport(analysis).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", text.c_str());
  } else {
    std::fputs(analyze::RenderTextReport(analysis).c_str(), stdout);  // escaped by the renderer
  }
  // Any run or attempt that hung, whatever the job did next: a script must never read a hang
  // as success. One whose every incident completed after all (slow, not hung) has its own code.
  switch (analyze::OverallOutcome(analysis)) {
    case analyze::Outcome::kNoHang: return kExitOk;
    case analyze::Outcome::kResolvedHang: return kExitResolved;
    case analyze::Outcome::kHang: break;
  }
  return kExitIncident;
}

}  // namespace

void AddAnalyzeCommand(CLI::App& app, int* exit_status) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand("analyze", "Merge every rank's dump under DIR... into one verdict");
  cmd->add_option("DIR", options->dirs,
                  "Directories of dumps, searched recursively: a shared one (one subdirectory per host is "
                  "fine), or one per host when each host wrote to its local disk")
      ->required();
  cmd->add_flag("--json", options->json, "Print the stable JSON schema ncclwatch.analysis (version 4) instead of text");
  AddInputBudgetOption(cmd, &options->budget_bytes);
  cmd->footer(
      "Dumps are grouped by run (launcher and communicators) and attempt (torchrun restart, SLURM\n"
      "requeue); each attempt is judged by its first incident, what followed (teardown) told after it.\n"
      "Exit status: 0 no verdict in any run read; 3 a hang/incident verdict (straggler, mismatch,\n"
      "collective_hang, init_hang, sync_stuck, rank_exited, p2p_*, replay_*) in some run or attempt, whatever the\n"
      "job did next; 4 verdicts, every one resolved (each rank that dumped saw it complete: slow, not\n"
      "hung); 2 bad usage or unusable input (missing directory, no dumps, every dump corrupt,\n"
      "truncated, foreign or of a future version, dumps over --max-input-bytes).");
  cmd->callback([options, exit_status] { *exit_status = RunAnalyze(*options); });
}

}  // namespace ncclwatch::tools
