// How `analyze` and `trace` take their input: a directory of dumps, read within an input
// budget (dump::ReadLimits), with one-line errors for input that cannot be used.
#ifndef NCCLWATCH_TOOLS_CLI_DUMP_INPUT_H_
#define NCCLWATCH_TOOLS_CLI_DUMP_INPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/dump/dump_reader.h"
#include "core/status/status.h"

namespace ncclwatch::tools {

// Registers --max-input-bytes SIZE ("512MiB", "2G", "1000000"; units are powers of 1024),
// defaulting *budget_bytes to dump::kDefaultInputBudgetBytes.
void AddInputBudgetOption(CLI::App* cmd, uint64_t* budget_bytes);

// Reads the dumps under each of `dirs` (one per host when hosts keep their dumps on local
// disks), each within `budget_bytes`: every dump and rejected file, or, when a directory is
// unusable (missing, over the budget) or none holds a usable dump, the one line to print
// after "ncclwatch <command>: ".
Result<dump::DumpSet> ReadUsableDumps(const std::vector<std::string>& dirs, uint64_t budget_bytes);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_CLI_DUMP_INPUT_H_
