// ncclwatch trace DIR -o trace.json [--max-input-bytes SIZE]
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/analyze/analyzer.h"
#include "core/analyze/comm_table.h"
#include "core/analyze/trace.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"
#include "core/format/escape.h"
#include "tools/cli/commands.h"
#include "tools/cli/dump_input.h"
#include "tools/cli/error_line.h"
#include "tools/cli/exit_status.h"

namespace ncclwatch::tools {
namespace {

struct TraceOptions {
  std::string dir;
  std::string output;
  uint64_t budget_bytes = dump::kDefaultInputBudgetBytes;
};

int RunTrace(const TraceOptions& options) {
  Result<dump::DumpSet> read = ReadUsableDumps({options.dir}, options.budget_bytes);
  if (!read.ok()) {
    PrintErrorLine("trace", read.error().message());
    return kExitUsage;
  }
  const dump::DumpSet& set = *read;
  for (const auto& r : set.rejected) PrintErrorLine("trace", "skipped " + r.error);
  analyze::Analysis analysis = analyze::Analyze(set);
  std::vector<const dump::RankDump*> all;
  for (const auto& loaded : set.dumps) all.push_back(&loaded.dump);
  nlohmann::json trace = analyze::BuildTrace(analyze::LatestPerProcess(all), analysis.verdict);
  std::string text = trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (const Status written = dump::WriteFileAtomically(options.output, text); !written.ok()) {
    PrintErrorLine("trace", written.message());
    return kExitUsage;
  }
  std::printf("wrote %s: %zu ranks, verdict %s; open it in ui.perfetto.dev or chrome://tracing\n",
              format::EscapeForTerminal(options.output).c_str(), analysis.dumps_read,
              detect::ToString(analysis.verdict.kind).c_str());
  return kExitOk;
}

}  // namespace

void AddTraceCommand(CLI::App& app, int* exit_status) {
  auto options = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Write a Perfetto / chrome://tracing timeline of the dumps under DIR");
  cmd->add_option("DIR", options->dir, "Directory of dumps")->required();
  cmd->add_option("-o,--output", options->output, "Trace file to write (Chrome Trace Event JSON)")->required();
  AddInputBudgetOption(cmd, &options->budget_bytes);
  cmd->footer("Exit status: 0 written; 2 bad usage, unusable input (as for analyze) or unwritable output.");
  cmd->callback([options, exit_status] { *exit_status = RunTrace(*options); });
}

}  // namespace ncclwatch::tools
