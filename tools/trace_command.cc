// ncclwatch trace DIR -o trace.json
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/analyze/analyzer.h"
#include "core/analyze/comm_table.h"
#include "core/analyze/trace.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"
#include "tools/commands.h"
#include "tools/exit_status.h"

namespace ncclwatch::tools {
namespace {

struct TraceOptions {
  std::string dir;
  std::string output;
};

int RunTrace(const TraceOptions& options) {
  dump::DumpSet set = dump::ReadDumpDir(options.dir);
  if (!set.error.empty()) {
    std::fprintf(stderr, "ncclwatch trace: %s\n", set.error.c_str());
    return kExitUsage;
  }
  if (set.dumps.empty()) {
    std::fprintf(stderr, "ncclwatch trace: %s: no usable dump%s%s\n", options.dir.c_str(),
                 set.rejected.empty() ? "" : "; first rejected: ",
                 set.rejected.empty() ? "" : set.rejected.front().error.c_str());
    return kExitUsage;
  }
  for (const auto& r : set.rejected) std::fprintf(stderr, "ncclwatch trace: skipped %s\n", r.error.c_str());
  analyze::Analysis analysis = analyze::Analyze(set);
  std::vector<const dump::RankDump*> all;
  for (const auto& loaded : set.dumps) all.push_back(&loaded.dump);
  nlohmann::json trace = analyze::BuildTrace(analyze::LatestPerProcess(all), analysis.verdict);
  std::string text = trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  dump::WriteResult written = dump::WriteFileAtomically(options.output, text);
  if (!written.ok()) {
    std::fprintf(stderr, "ncclwatch trace: %s\n", written.message.c_str());
    return kExitUsage;
  }
  std::printf("wrote %s: %zu ranks, verdict %s; open it in ui.perfetto.dev or chrome://tracing\n",
              options.output.c_str(), analysis.dumps_read, analysis.verdict.kind.c_str());
  return kExitOk;
}

}  // namespace

void AddTraceCommand(CLI::App& app, int* exit_status) {
  auto options = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Write a Perfetto / chrome://tracing timeline of the dumps under DIR");
  cmd->add_option("DIR", options->dir, "Directory of dumps")->required();
  cmd->add_option("-o,--output", options->output, "Trace file to write (Chrome Trace Event JSON)")->required();
  cmd->footer("Exit status: 0 written; 2 bad usage, unusable input or unwritable output.");
  cmd->callback([options, exit_status] { *exit_status = RunTrace(*options); });
}

}  // namespace ncclwatch::tools
