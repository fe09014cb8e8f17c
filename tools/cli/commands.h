// The `ncclwatch` subcommands. Each Add*Command registers one CLI11 subcommand whose
// callback stores the process exit status in *exit_status (see exit_status.h). `settings`
// (read once in main) must outlive the parse.
#ifndef NCCLWATCH_TOOLS_CLI_COMMANDS_H_
#define NCCLWATCH_TOOLS_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

#include "core/settings/settings.h"

namespace ncclwatch::tools {

void AddAnalyzeCommand(CLI::App& app, int* exit_status);
void AddTraceCommand(CLI::App& app, int* exit_status);
void AddRunCommand(CLI::App& app, const settings::Settings& settings, int* exit_status);
void AddDoctorCommand(CLI::App& app, const settings::Settings& settings, int* exit_status);
void AddStatusCommand(CLI::App& app, int* exit_status);
void AddGcCommand(CLI::App& app, int* exit_status);
void AddExporterCommand(CLI::App& app, int* exit_status);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_CLI_COMMANDS_H_
