// ncclwatch trace DIR [DIR...] -o trace.json [--run N] [--max-input-bytes SIZE]
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analyze/analyzer.h"
#include "core/analyze/trace.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"
#include "core/format/escape.h"
#include "core/format/plural.h"
#include "tools/cli/commands.h"
#include "tools/cli/dump_input.h"
#include "tools/cli/error_line.h"
#include "tools/cli/exit_status.h"

namespace ncclwatch::tools {
namespace {

struct TraceOptions {
  std::vector<std::string> dirs;
  std::string output;
  size_t run = 1;  // as analyze numbers the runs: 1 the most recent
  uint64_t budget_bytes = dump::kDefaultInputBudgetBytes;
};

int RunTrace(const TraceOptions& options) {
  Result<dump::DumpSet> read = ReadUsableDumps(options.dirs, options.budget_bytes);
  if (!read.ok()) {
    PrintErrorLine("trace", read.error().message());
    return kExitUsage;
  }
  const dump::DumpSet& set = *read;
  for (const auto& r : set.rejected) PrintErrorLine("trace", "skipped " + r.error);
  // The dumps analyze judges a run by, grouped as analyze groups them (core/analyze/runs.h).
  const std::vector<analyze::JudgedRun> runs = analyze::AnalyzeRuns(set);
  if (options.run == 0 || options.run > runs.size()) {
    PrintErrorLine("trace", "--run " + std::to_string(options.run) + ": the dumps hold " +
                                format::CountOf(runs.size(), "run", "runs"));
    return kExitUsage;
  }
  const analyze::JudgedRun& run = runs[options.run - 1];
  nlohmann::json trace = analyze::BuildTrace(run.judged, run.analysis.verdict);
  std::string text = trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (const Status written = dump::WriteFileAtomically(options.output, text); !written.ok()) {
    PrintErrorLine("trace", written.message());
    return kExitUsage;
  }
  std::printf("wrote %s: %zu ranks, verdict %s; open it in ui.perfetto.dev or chrome://tracing\n",
              format::EscapeForTerminal(options.output).c_str(), run.analysis.dumps_read,
              detect::ToString(run.analysis.verdict.kind).c_str());
  if (runs.size() > 1) {
    std::printf("traced run %zu of %zu unrelated runs in these directories (as analyze numbers them); --run N for another\n",
                options.run, runs.size());
  }
  return kExitOk;
}

}  // namespace

void AddTraceCommand(CLI::App& app, int* exit_status) {
  auto options = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Write a Perfetto / chrome://tracing timeline of the dumps under DIR...");
  cmd->add_option("DIR", options->dirs,
                  "Directories of dumps, searched recursively (one per host is fine, as for analyze)")
      ->required();
  cmd->add_option("--run", options->run,
                  "Which run to draw when the directories hold several, numbered as analyze reports them (1: the "
                  "most recent)")
      ->capture_default_str();
  cmd->add_option("-o,--output", options->output, "Trace file to write (Chrome Trace Event JSON)")->required();
  AddInputBudgetOption(cmd, &options->budget_bytes);
  cmd->footer(
      "Draws the dumps analyze judges the run by: its latest attempt with an incident, at that incident.\n"
      "Exit status: 0 written; 2 bad usage, unusable input (as for analyze), no such run, or unwritable output.");
  cmd->callback([options, exit_status] { *exit_status = RunTrace(*options); });
}

}  // namespace ncclwatch::tools
