#include "tools/cli/dump_input.h"

#include "core/format/plural.h"

namespace ncclwatch::tools {

void AddInputBudgetOption(CLI::App* cmd, uint64_t* budget_bytes) {
  *budget_bytes = dump::kDefaultInputBudgetBytes;
  cmd->add_option("--max-input-bytes", *budget_bytes,
                  "Refuse to read dumps totalling more than SIZE per directory (default 512MiB; each file counted once "
                  "however many links name it, and at least 4KiB). Units: b, kb, mb, gb (powers of 1024)")
      ->transform(CLI::AsSizeValue(false));
}

Result<dump::DumpSet> ReadUsableDumps(const std::vector<std::string>& dirs, uint64_t budget_bytes) {
  dump::DumpSet set;
  std::string dir;
  for (const std::string& one : dirs) {
    Result<dump::DumpSet, dump::DumpDirError> read = dump::ReadDumpDir(one, dump::ReadLimits{budget_bytes});
    if (!read.ok()) {
      return Status::Error(read.error().why + (read.error().over_budget ? "; raise it with --max-input-bytes" : ""));
    }
    for (auto& d : read->dumps) set.dumps.push_back(std::move(d));
    for (auto& r : read->rejected) set.rejected.push_back(std::move(r));
    dir += (dir.empty() ? "" : " ") + one;
  }
  if (set.dumps.empty() && set.rejected.empty()) return Status::Error(dir + ": no dumps (*.json) found");
  if (set.dumps.empty()) {
    return Status::Error(dir + ": no usable dump; " +
                         format::CountOf(set.rejected.size(), "file rejected", "files rejected") +
                         ", first: " + set.rejected.front().error);
  }
  return set;
}

}  // namespace ncclwatch::tools
