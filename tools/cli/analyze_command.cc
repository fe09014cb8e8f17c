// ncclwatch analyze DIR [DIR...] [--json] [--max-input-bytes SIZE]
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analyze/analyzer.h"
#include "core/analyze/report.h"
#include "core/analyze/resolution.h"
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
  analyze::Analysis analysis = analyze::Analyze(set);
  analyze::ApplyResolutions(set, &analysis);
  if (options.json) {
    // error_handler_t::replace: a path in "rejected" may be invalid UTF-8, which the default
    // handler would throw on; JSON escapes every control character itself.
    std::string text = analyze::RenderJsonReport(analysis).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", text.c_str());
  } else {
    std::fputs(analyze::RenderTextReport(analysis).c_str(), stdout);  // escaped by the renderer
  }
  // A job whose every incident completed after all (slow, not hung) ended well.
  return analysis.verdict.kind == detect::VerdictKind::kNone || analysis.resolution.resolved ? kExitOk : kExitIncident;
}

}  // namespace

void AddAnalyzeCommand(CLI::App& app, int* exit_status) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand("analyze", "Merge every rank's dump under DIR... into one verdict");
  cmd->add_option("DIR", options->dirs,
                  "Directories of dumps, searched recursively: a shared one (one subdirectory per host is "
                  "fine), or one per host when each host wrote to its local disk")
      ->required();
  cmd->add_flag("--json", options->json, "Print the stable JSON schema ncclwatch.analysis (version 3) instead of text");
  AddInputBudgetOption(cmd, &options->budget_bytes);
  cmd->footer(
      "Exit status: 0 verdict none, or every incident resolved (each rank that dumped saw it complete);\n"
      "3 a hang/incident verdict (straggler, mismatch, collective_hang, init_hang, sync_stuck,\n"
      "rank_exited, p2p_*, replay_straggler, replay_hang) not resolved; 2 bad usage or unusable\n"
      "input (missing directory, no dumps, every dump corrupt, truncated, foreign or of a future\n"
      "version, dumps over --max-input-bytes).");
  cmd->callback([options, exit_status] { *exit_status = RunAnalyze(*options); });
}

}  // namespace ncclwatch::tools
