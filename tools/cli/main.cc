// ncclwatch: post-mortem analysis, live status, timelines, launching and environment
// checks for jobs watched by libncclwatch.so. See tools/README.md.
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/format/escape.h"
#include "core/shm/layout.h"
#include "core/settings/settings.h"
#include "tools/cli/commands.h"
#include "tools/cli/exit_status.h"

namespace {

std::string CommandNames(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return names;
}

// The first word when it is neither an option nor a command: CLI11 would only say that a
// subcommand is required.
std::string UnknownCommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == argv[1]) return "";
  }
  return argv[1];
}

// `ncclwatch run ls -la`: the command's own options were taken for run's.
std::string RunHint(const std::string& command, int argc, char** argv) {
  if (command != "run") return "";
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--") return "";
  }
  return "; put -- before the command: ncclwatch run [OPTIONS] -- CMD [ARGS...]";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ncclwatch::tools;
  CLI::App app{"ncclwatch: find the rank, communicator and collective a multi-GPU job is stuck on",
               "ncclwatch"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ncclwatch ") + NCCLWATCH_VERSION +
                                        " (shared memory layout " + std::to_string(ncclwatch::shm::kLayoutVersion) +
                                        ")");
  app.footer(
      "Exit status: 0 success (analyze: verdict none), 2 bad usage or unusable input,\n"
      "3 analyze found a hang, 127 run could not execute CMD.");
  // The environment, read once: `run` extends LD_PRELOAD, `doctor` shows NCCL_* and searches
  // PATH. A rejected NCCLWATCH_* value is reported here too, as the preload will.
  std::vector<std::string> warnings;
  const ncclwatch::settings::Settings settings = ncclwatch::settings::ReadSettings(&warnings);
  for (const std::string& warning : warnings) std::fprintf(stderr, "ncclwatch: warning: %s\n", warning.c_str());
  int exit_status = kExitOk;
  AddAnalyzeCommand(app, &exit_status);
  AddStatusCommand(app, &exit_status);
  AddTraceCommand(app, &exit_status);
  AddRunCommand(app, settings, &exit_status);
  AddDoctorCommand(app, settings, &exit_status);
  AddGcCommand(app, &exit_status);
  AddExporterCommand(app, &exit_status);
  // Subcommands run inside parse(). Nothing may escape main as an exception (std::terminate
  // would abort with a core dump and a multi-line message): one line and exit 2 instead.
  try {
    if (const std::string unknown = UnknownCommand(app, argc, argv); !unknown.empty()) {
      std::fprintf(stderr, "ncclwatch: unknown command '%s' (commands: %s; see --help)\n",
                   ncclwatch::format::EscapeForTerminal(unknown).c_str(), CommandNames(app).c_str());
      return kExitUsage;
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const std::string command = argc > 1 && app.get_subcommands().size() == 1 ? app.get_subcommands()[0]->get_name() : "";
    std::fprintf(stderr, "ncclwatch%s%s: %s%s (see --help)\n", command.empty() ? "" : " ", command.c_str(),
                 ncclwatch::format::EscapeForTerminal(e.what()).c_str(), RunHint(command, argc, argv).c_str());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "ncclwatch: out of memory (a smaller --max-input-bytes bounds what analyze and trace read)\n");
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ncclwatch: internal error: %s\n", ncclwatch::format::EscapeForTerminal(e.what()).c_str());
    return kExitUsage;
  }
  return exit_status;
}
