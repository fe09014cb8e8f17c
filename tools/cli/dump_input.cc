#include "tools/cli/dump_input.h"

#include "core/format/plural.h"
#include "tools/cli/error_line.h"

namespace ncclwatch::tools {

void AddInputBudgetOption(CLI::App* cmd, uint64_t* budget_bytes) {
  *budget_bytes = dump::kDefaultInputBudgetBytes;
  cmd->add_option("--max-input-bytes", *budget_bytes,
                  "Refuse to read dumps totalling more than SIZE per directory (default 512MiB; each file counted once "
                  "however many links name it, and at least 4KiB). Units: b, kb, mb, gb (powers of 1024)")
      ->transform(CLI::AsSizeValue(false));
}

bool ReadUsableDumps(const char* command, const std::vector<std::string>& dirs, uint64_t budget_bytes,
                     dump::DumpSet* set) {
  *set = dump::DumpSet{};
  std::string dir;
  for (const std::string& one : dirs) {
    dump::DumpSet read = dump::ReadDumpDir(one, dump::ReadLimits{budget_bytes});
    if (!read.error.empty()) {
      PrintErrorLine(command, read.error + (read.over_budget ? "; raise it with --max-input-bytes" : ""));
      return false;
    }
    for (auto& d : read.dumps) set->dumps.push_back(std::move(d));
    for (auto& r : read.rejected) set->rejected.push_back(std::move(r));
    dir += (dir.empty() ? "" : " ") + one;
  }
  if (set->dumps.empty() && set->rejected.empty()) {
    PrintErrorLine(command, dir + ": no dumps (*.json) found");
    return false;
  }
  if (set->dumps.empty()) {
    PrintErrorLine(command, dir + ": no usable dump; " +
                                format::CountOf(set->rejected.size(), "file rejected", "files rejected") +
                                ", first: " + set->rejected.front().error);
    return false;
  }
  return true;
}

}  // namespace ncclwatch::tools
