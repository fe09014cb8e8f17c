// ncclwatch doctor [--pid PID | BINARY] [--json]: checks what the field reports point at, and
// which NCCL a process reaches and whether ncclwatch does (tools/doctor/nccl_reach.h). The facts are
// gathered once (doctor_report.h) and printed as text or JSON.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <tuple>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/format/escape.h"
#include "core/settings/settings.h"
#include "tools/cli/commands.h"
#include "tools/doctor/doctor_report.h"
#include "tools/cli/error_line.h"
#include "tools/cli/exit_status.h"

namespace ncclwatch::tools {
namespace {

struct DoctorOptions {
  std::optional<int> pid;
  std::string binary;
  bool json = false;
};

std::string FormatSecondsOf(uint64_t ns) {
  char text[64];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(ns) / 1e9);
  return text;
}

// Values quote what the machine and the target supplied (paths from /proc/PID/maps, the
// driver's version file, another process's environment): escaped, so they can neither
// control the terminal nor fake a line.
void Line(const std::string& key, const std::string& value) {
  std::printf("%-14s %s\n", (key + ":").c_str(), format::EscapeForTerminal(value).c_str());
}

std::string WithWarning(const Checked& fact) {
  return fact.warning.empty() ? fact.value : fact.value + "  WARNING: " + fact.warning;
}

void PrintHost(const HostFacts& host) {
  Line("driver", host.driver.value.empty() ? "no NVIDIA driver (/proc/driver/nvidia/version absent or unreadable)"
                                           : "NVIDIA " + WithWarning(host.driver));
  Line("kernel", host.kernel.value.empty() ? "unknown" : WithWarning(host.kernel));
  for (const auto& [label, lib, symbol] : {std::tuple{"NCCL", &host.nccl, "ncclGetVersion"},
                                           std::tuple{"CUDA runtime", &host.cuda_runtime, "cudaRuntimeGetVersion"}}) {
    if (!lib->found) Line(label, "not found (" + lib->path + ")");
    else if (lib->version.empty()) Line(label, "found " + lib->path + " but " + symbol + " failed");
    else Line(label, lib->version + " (" + lib->path + ")");
  }
}

void PrintEnvironment(const DoctorReport& report) {
  if (report.nccl_env.empty()) Line("NCCL env", "no NCCL_* variable set (of " + report.nccl_env_of + ")");
  else Line("NCCL env", "of " + report.nccl_env_of + ":");
  for (const auto& [k, v] : report.nccl_env) {
    std::printf("    %s=%s\n", format::EscapeForTerminal(k).c_str(), format::EscapeForTerminal(v).c_str());
  }
}

void PrintProcess(const ProcessFactsOfDoctor& p) {
  const std::string who = "pid " + std::to_string(p.pid);
  Line("ncclwatch", p.preload_mapped ? "libncclwatch.so is loaded in " + who +
                                           (p.preload_ahead ? " (preloaded)" : " (but not preloaded)")
                                     : "libncclwatch.so is NOT loaded in " + who);
  for (const LoadedNcclFacts& n : p.nccls) {
    Line("NCCL loaded", n.nccl.path + " (" + (n.nccl.version.empty() ? "version unknown" : n.nccl.version) + ")");
    Line("  came by", n.came_by);
    Line("  serves", n.serves);
    Line("  reached", n.reached);
    Line("target", who + " uses " + n.nccl.path + " dynamically: ncclwatch can interpose it");
  }
  if (!p.static_nccl_in.empty()) {
    Line("target", who + " has NCCL linked statically into " + p.static_nccl_in +
                       ": ncclwatch CANNOT interpose it, never (no symbol to interpose). Use a build that links "
                       "libnccl.so.2 dynamically.");
  }
  if (p.nccls.empty() && p.static_nccl_in.empty()) Line("target", who + " has not loaded NCCL (yet)");
}

// What ncclwatch in the process runs with: the settings its environment gives (the preload
// reads them once, at its first communicator), and the rank its launcher gave it.
void PrintSettings(const ProcessSettingsFacts& s) {
  Line("rank", s.global_rank < 0 ? std::string("not given by a launcher (taken from its communicators)")
                                 : std::to_string(s.global_rank) + " of " + std::to_string(s.world_size) +
                                       " (local rank " + std::to_string(s.local_rank) + ")");
  Line("job id", s.job_id);
  Line("stall", FormatSecondsOf(s.stall_threshold_ns) + " (NCCLWATCH_STALL_SEC)");
  Line("dump dir", s.dump_dir);
  Line("disabled", s.disabled ? "yes (NCCLWATCH_DISABLE=1)" : "no");
  for (const std::string& w : s.warnings) Line("WARNING", w);
}

void PrintText(const DoctorReport& report) {
  if (report.process && !report.process_is_self) {
    std::printf("process %d:\n", report.process->pid);
    PrintProcess(*report.process);
    PrintSettings(report.process->settings);
    PrintEnvironment(report);
    std::printf("\nhost (what this shell finds, which the process may not use):\n");
    PrintHost(report.host);
    return;
  }
  PrintHost(report.host);
  PrintEnvironment(report);
  if (report.binary) {
    Line("target", report.binary->verdict);
    if (!report.binary->runpath.empty()) Line("search", "RUNPATH " + report.binary->runpath);
    if (!report.binary->rpath.empty()) Line("search", "RPATH " + report.binary->rpath);
  }
  if (report.process) {
    std::printf("this process, as a job that dlopens libnccl.so.2 would:\n");
    PrintProcess(*report.process);
  }
}

nlohmann::json LibraryJson(const LibraryFound& lib) {
  return {{"found", lib.found}, {"path", lib.path}, {"version", lib.version.empty() ? nlohmann::json(nullptr) : nlohmann::json(lib.version)}};
}

nlohmann::json CheckedJson(const Checked& fact) {
  return {{"value", fact.value.empty() ? nlohmann::json(nullptr) : nlohmann::json(fact.value)},
          {"warning", fact.warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(fact.warning)}};
}

const char* ArrivalName(NcclArrival arrival) {
  switch (arrival) {
    case NcclArrival::kPreloaded: return "preloaded";
    case NcclArrival::kNeededByProgram: return "needed_by_program";
    case NcclArrival::kNeededInClosure: return "needed_in_closure";
    case NcclArrival::kNeededByDlopened: return "needed_by_dlopened";
    case NcclArrival::kDlopened: return "dlopened";
  }
  return "dlopened";
}

nlohmann::json ProcessJson(const ProcessFactsOfDoctor& p) {
  nlohmann::json nccls = nlohmann::json::array();
  for (const LoadedNcclFacts& n : p.nccls) {
    nccls.push_back({{"path", n.nccl.path},
                     {"version", n.nccl.version.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.nccl.version)},
                     {"arrival", ArrivalName(n.nccl.arrival)},
                     {"came_by", n.came_by},
                     {"serves", n.serves},
                     {"reached", n.reached}});
  }
  const ProcessSettingsFacts& s = p.settings;
  auto known = [](int v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {{"pid", p.pid},
          {"ncclwatch_loaded", p.preload_mapped},
          {"ncclwatch_preloaded", p.preload_ahead},
          {"nccls", std::move(nccls)},
          {"static_nccl_in", p.static_nccl_in.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.static_nccl_in)},
          {"settings",
           {{"global_rank", known(s.global_rank)},
            {"world_size", known(s.world_size)},
            {"local_rank", known(s.local_rank)},
            {"job_id", s.job_id},
            {"stall_threshold_ns", s.stall_threshold_ns},
            {"dump_dir", s.dump_dir},
            {"disabled", s.disabled},
            {"warnings", s.warnings}}}};
}

const char* BinaryNcclName(BinaryFacts::Nccl nccl) {
  switch (nccl) {
    case BinaryFacts::Nccl::kDynamic: return "dynamic";
    case BinaryFacts::Nccl::kStatic: return "static";
    case BinaryFacts::Nccl::kNone: break;
  }
  return "none";
}

void PrintJson(const DoctorReport& report) {
  nlohmann::json out = {{"schema", "ncclwatch.doctor"}, {"version", 1}};
  out["process"] = report.process ? ProcessJson(*report.process) : nlohmann::json(nullptr);
  out["process_is_self"] = report.process_is_self;
  out["binary"] = report.binary ? nlohmann::json{{"path", report.binary->path},
                                                 {"nccl", BinaryNcclName(report.binary->nccl)},
                                                 {"needed", report.binary->needed},
                                                 {"runpath", report.binary->runpath},
                                                 {"rpath", report.binary->rpath},
                                                 {"verdict", report.binary->verdict}}
                                : nlohmann::json(nullptr);
  out["nccl_env"] = {{"of", report.nccl_env_of}, {"variables", report.nccl_env}};
  out["host"] = {{"driver", CheckedJson(report.host.driver)},
                 {"kernel", CheckedJson(report.host.kernel)},
                 {"nccl", LibraryJson(report.host.nccl)},
                 {"cuda_runtime", LibraryJson(report.host.cuda_runtime)}};
  std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

std::map<std::string, std::string> NcclVariables(const settings::EnvVars& env) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : env) {
    if (name.rfind("NCCL_", 0) == 0) out[name] = value;
  }
  return out;
}

int RunDoctor(const DoctorOptions& options, const settings::Settings& settings) {
  if (options.pid && !options.binary.empty()) {
    PrintErrorLine("doctor", "give either --pid or BINARY, not both");
    return kExitUsage;
  }
  DoctorReport report;
  // The target first: a pid or binary that cannot be read is said at once, not after a host report.
  if (options.pid) {
    Result<ProcessFactsOfDoctor> process = InspectDoctorProcess(*options.pid);
    if (!process.ok()) {
      PrintErrorLine("doctor", process.error().message());
      return kExitUsage;
    }
    report.process = std::move(process).value();
    report.nccl_env = NcclVariables(settings::ReadEnvironmentOf(*options.pid));
    report.nccl_env_of = "pid " + std::to_string(*options.pid);
  } else {
    if (!options.binary.empty()) {
      Result<BinaryFacts> binary = InspectDoctorBinary(options.binary, settings.path);
      if (!binary.ok()) {
        PrintErrorLine("doctor", binary.error().message());
        return kExitUsage;
      }
      report.binary = std::move(binary).value();
    } else if (void* nccl = ::dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL)) {
      // This process, which reaches NCCL as a dlopen user does: whether an LD_PRELOAD set in
      // this shell would reach such a job.
      // Unreadable only if /proc is not mounted: the report then has no process part.
      Result<ProcessFactsOfDoctor> self = InspectDoctorProcess(static_cast<int>(::getpid()));
      if (self.ok()) report.process = std::move(self).value();
      report.process_is_self = report.process.has_value();
      ::dlclose(nccl);
    }
    report.nccl_env = settings.nccl_env;
    report.nccl_env_of = "this shell";
  }
  report.host = InspectHost();
  if (options.json) PrintJson(report);
  else PrintText(report);
  return kExitOk;
}

}  // namespace

void AddDoctorCommand(CLI::App& app, const settings::Settings& settings, int* exit_status) {
  auto options = std::make_shared<DoctorOptions>();
  CLI::App* cmd = app.add_subcommand("doctor", "Check driver, kernel, NCCL/CUDA versions, NCCL_* env and interposability");
  cmd->add_option("--pid", options->pid,
                  "Inspect a running process: its environment and ncclwatch settings, which NCCL it loaded, how "
                  "(NEEDED, RPATH/RUNPATH, dlopen), whose calls each serves and whether ncclwatch reaches it");
  cmd->add_option("BINARY", options->binary, "Inspect an executable or shared object for a dynamic or static NCCL");
  cmd->add_flag("--json", options->json, "One JSON object (schema ncclwatch.doctor v1; tools/README.md)");
  cmd->footer(
      "Lines marked WARNING point at known field causes (driver 545.x, kernel older than 5.5).\n"
      "Without --pid or BINARY, this process is inspected as a job that dlopens libnccl.so.2.\n"
      "Statically linked NCCL is never reached: there is no symbol to interpose.\n"
      "Exit status: 0 checks done; 2 bad usage or unreadable target.");
  cmd->callback([options, &settings, exit_status] { *exit_status = RunDoctor(*options, settings); });
}

}  // namespace ncclwatch::tools
