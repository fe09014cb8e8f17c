// ncclwatch doctor [--pid PID | BINARY]: checks what the field reports point at, and which
// NCCL a process reaches and whether ncclwatch does (tools/nccl_reach.h).
#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/analyze/hints.h"
#include "core/dump/process_facts.h"
#include "core/format/escape.h"
#include "core/settings/settings.h"
#include "tools/commands.h"
#include "tools/elf_inspect.h"
#include "tools/error_line.h"
#include "tools/exit_status.h"
#include "tools/nccl_reach.h"

namespace ncclwatch::tools {
namespace {

std::string FormatSecondsOf(uint64_t ns) {
  char text[64];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(ns) / 1e9);
  return text;
}

struct DoctorOptions {
  std::optional<int> pid;
  std::string binary;
};

// Values quote what the machine and the target supplied (paths from /proc/PID/maps, the
// driver's version file, another process's environment): escaped, so they can neither
// control the terminal nor fake a line.
std::string Esc(const std::string& text) { return format::EscapeForTerminal(text); }

void Line(const std::string& key, const std::string& value) {
  std::printf("%-14s %s\n", (key + ":").c_str(), Esc(value).c_str());
}

void Driver() {
  std::string version = dump::ReadNvidiaDriverVersion();
  if (version.empty()) {
    Line("driver", "no NVIDIA driver (/proc/driver/nvidia/version absent or unreadable)");
    return;
  }
  std::string note = version.rfind("545.", 0) == 0
                         ? "  WARNING: 545.x has field reports of NCCL P2P hangs; try NCCL_P2P_DISABLE=1 or another driver"
                         : "";
  Line("driver", "NVIDIA " + version + note);
}

void Kernel() {
  struct utsname u;
  if (::uname(&u) != 0) {
    Line("kernel", "unknown");
    return;
  }
  std::string release = u.release;
  Line("kernel", release + (analyze::KernelOlderThan5_5(release)
                                ? "  WARNING: older than 5.5, where NCCL hangs have been reported; 5.5+ is recommended"
                                : ""));
}

// dlopen'ed RTLD_LOCAL so that nothing of it leaks into this process's global scope.
void LibraryVersion(const char* label, const char* soname, const char* symbol, bool nccl_style) {
  void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    Line(label, std::string("not found (") + soname + ")");
    return;
  }
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(::dlsym(handle, symbol));
  int version = 0;
  std::string path = soname;
  Dl_info info;
  if (get && ::dladdr(reinterpret_cast<void*>(get), &info) && info.dli_fname) path = info.dli_fname;
  if (!get || get(&version) != 0) {
    Line(label, "found " + path + " but " + symbol + " failed");
  } else if (nccl_style) {
    Line(label, std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
                    std::to_string(version % 100) + " (" + path + ")");
  } else {
    Line(label, std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10) + " (" + path + ")");
  }
  ::dlclose(handle);
}

// This process's NCCL_* variables, or those of `pid`.
std::map<std::string, std::string> NcclEnvironment(std::optional<int> pid, const settings::Settings& own) {
  if (!pid) return own.nccl_env;
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : settings::ReadEnvironmentOf(*pid)) {
    if (name.rfind("NCCL_", 0) == 0) out[name] = value;
  }
  return out;
}

void Environment(std::optional<int> pid, const settings::Settings& own) {
  auto env = NcclEnvironment(pid, own);
  std::string whose = pid ? "of pid " + std::to_string(*pid) : "of this shell";
  if (env.empty()) Line("NCCL env", "no NCCL_* variable set (" + whose + ")");
  else Line("NCCL env", whose + ":");
  for (const auto& [k, v] : env) std::printf("    %s=%s\n", Esc(k).c_str(), Esc(v).c_str());
}

std::string FindInPath(const std::string& name, const std::string& path) {
  if (name.find('/') != std::string::npos || access(name.c_str(), F_OK) == 0) return name;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

int BinaryTarget(const std::string& name, const std::string& search_path) {
  std::string path = FindInPath(name, search_path);
  ElfFacts facts = InspectElf(path);
  if (!facts.error.empty()) {
    PrintErrorLine("doctor", facts.error);
    return kExitUsage;
  }
  for (const auto& needed : facts.needed) {
    if (IsNcclLibraryName(needed)) {
      Line("target", path + " links " + needed + " dynamically: ncclwatch can interpose it");
      if (!facts.runpath.empty()) Line("search", "RUNPATH " + facts.runpath);
      if (!facts.rpath.empty()) Line("search", "RPATH " + facts.rpath);
      return kExitOk;
    }
  }
  if (facts.defines_nccl_symbol || facts.contains_nccl_string) {
    Line("target", path + " has NCCL linked statically (it " +
                       (facts.defines_nccl_symbol ? std::string("defines ncclAllReduce") : "contains \"ncclAllReduce\"") +
                       " and has no libnccl dependency): ncclwatch CANNOT interpose it. Use a build that links "
                       "libnccl.so.2 dynamically (e.g. the PyTorch pip wheels, not conda or source builds).");
    return kExitOk;
  }
  Line("target", path + " does not link NCCL; if it loads NCCL at run time (Python, dlopen), run "
                        "`ncclwatch doctor --pid PID` on the running process");
  return kExitOk;
}

// What ncclwatch in `pid` runs with: the settings its environment gives (the preload reads
// them once, at its first communicator), and the rank its launcher gave it.
void ProcessSettings(int pid) {
  const settings::EnvVars env = settings::ReadEnvironmentOf(pid);
  std::vector<std::string> warnings;
  const settings::Settings s = settings::ParseSettings(env, &warnings);
  const shm::RankIdentity& rank = s.launcher_rank;
  Line("rank", rank.global_rank < 0 ? std::string("not given by a launcher (taken from its communicators)")
                                    : std::to_string(rank.global_rank) + " of " + std::to_string(rank.world_size) +
                                          " (local rank " + std::to_string(rank.local_rank) + ")");
  Line("job id", s.job_id);
  Line("stall", FormatSecondsOf(s.stall_threshold_ns) + " (NCCLWATCH_STALL_SEC)");
  std::string dump_dir = s.dump_dir;
  if (dump_dir.empty()) {
    char cwd[4096] = {};
    const ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/cwd").c_str(), cwd, sizeof cwd - 1);
    dump_dir = (n > 0 ? std::string(cwd, static_cast<size_t>(n)) : std::string("<its working directory>")) +
               "/ncclwatch-dumps/" + s.job_id;
  }
  Line("dump dir", dump_dir);
  Line("disabled", s.disable ? "yes (NCCLWATCH_DISABLE=1)" : "no");
  for (const std::string& w : warnings) Line("WARNING", w);
}

// Which NCCL the process loaded, how it came, and whether ncclwatch reaches it.
int PidTarget(int pid, const ProcessReach& reach) {
  std::string who = "pid " + std::to_string(pid);
  Line("ncclwatch", reach.preload_mapped ? "libncclwatch.so is loaded in " + who +
                                               (reach.preload_ahead ? " (preloaded)" : " (but not preloaded)")
                                         : "libncclwatch.so is NOT loaded in " + who);
  for (const auto& nccl : reach.nccls) {
    Line("NCCL loaded", nccl.path + " (" + (nccl.version.empty() ? "version unknown" : nccl.version) + ")");
    Line("  came by", DescribeArrival(nccl, reach.exe));
    Line("  reached", DescribeReach(reach, nccl));
    Line("target", who + " uses " + nccl.path + " dynamically: ncclwatch can interpose it");
  }
  if (!reach.static_nccl_in.empty()) {
    Line("target", who + " has NCCL linked statically into " + reach.static_nccl_in +
                       ": ncclwatch CANNOT interpose it, never (no symbol to interpose). Use a build that links "
                       "libnccl.so.2 dynamically.");
  }
  if (reach.nccls.empty() && reach.static_nccl_in.empty()) Line("target", who + " has not loaded NCCL (yet)");
  return kExitOk;
}

// This process, which reaches NCCL as a dlopen user does: whether an LD_PRELOAD set in this
// shell would reach such a job.
int SelfTarget() {
  void* nccl = ::dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!nccl) return kExitOk;  // the NCCL: line above already says "not found"
  std::printf("this process, as a job that dlopens libnccl.so.2 would:\n");
  const int self = static_cast<int>(::getpid());
  int status = PidTarget(self, InspectProcessReach(self));
  ::dlclose(nccl);
  return status;
}

int RunDoctor(const DoctorOptions& options, const settings::Settings& settings) {
  if (options.pid && !options.binary.empty()) {
    std::fprintf(stderr, "ncclwatch doctor: give either --pid or BINARY, not both\n");
    return kExitUsage;
  }
  // The target first: a pid that does not exist is said at once, not after a host report.
  std::optional<ProcessReach> reach;
  if (options.pid) {
    reach = InspectProcessReach(*options.pid);
    if (!reach->error.empty()) {
      PrintErrorLine("doctor", reach->error);
      return kExitUsage;
    }
    std::printf("process %d:\n", *options.pid);
    PidTarget(*options.pid, *reach);
    ProcessSettings(*options.pid);
    Environment(options.pid, settings);
    std::printf("\nhost (what this shell finds, which the process may not use):\n");
  }
  Driver();
  Kernel();
  LibraryVersion("NCCL", "libnccl.so.2", "ncclGetVersion", true);
  LibraryVersion("CUDA runtime", "libcudart.so.13", "cudaRuntimeGetVersion", false);
  if (options.pid) return kExitOk;
  Environment(options.pid, settings);
  if (!options.binary.empty()) return BinaryTarget(options.binary, settings.path);
  return SelfTarget();
}

}  // namespace

void AddDoctorCommand(CLI::App& app, const settings::Settings& settings, int* exit_status) {
  auto options = std::make_shared<DoctorOptions>();
  CLI::App* cmd = app.add_subcommand("doctor", "Check driver, kernel, NCCL/CUDA versions, NCCL_* env and interposability");
  cmd->add_option("--pid", options->pid,
                  "Inspect a running process: its environment, which NCCL it loaded, how (NEEDED, RPATH/RUNPATH, "
                  "dlopen) and whether ncclwatch reaches it");
  cmd->add_option("BINARY", options->binary, "Inspect an executable or shared object for a dynamic or static NCCL");
  cmd->footer(
      "Lines marked WARNING point at known field causes (driver 545.x, kernel older than 5.5).\n"
      "Without --pid or BINARY, this process is inspected as a job that dlopens libnccl.so.2.\n"
      "Statically linked NCCL is never reached: there is no symbol to interpose.\n"
      "Exit status: 0 checks done; 2 bad usage or unreadable target.");
  cmd->callback([options, &settings, exit_status] { *exit_status = RunDoctor(*options, settings); });
}

}  // namespace ncclwatch::tools
