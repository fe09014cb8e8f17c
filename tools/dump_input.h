// How `analyze` and `trace` take their input: a directory of dumps, read within an input
// budget (dump::ReadLimits), with one-line errors for input that cannot be used.
#ifndef NCCLWATCH_TOOLS_DUMP_INPUT_H_
#define NCCLWATCH_TOOLS_DUMP_INPUT_H_

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "core/dump/dump_reader.h"

namespace ncclwatch::tools {

// Registers --max-input-bytes SIZE ("512MiB", "2G", "1000000"; units are powers of 1024),
// defaulting *budget_bytes to dump::kDefaultInputBudgetBytes.
void AddInputBudgetOption(CLI::App* cmd, uint64_t* budget_bytes);

// Reads the dumps under `dir`. Returns false, after printing one line
// "ncclwatch <command>: ..." on stderr, when the directory is unusable (missing, over the
// budget) or holds no usable dump; otherwise `set` holds the dumps and rejected files.
bool ReadUsableDumps(const char* command, const std::string& dir, uint64_t budget_bytes, dump::DumpSet* set);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_DUMP_INPUT_H_
