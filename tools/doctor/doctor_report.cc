#include "tools/doctor/doctor_report.h"

#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <sstream>

#include "core/analyze/hints.h"
#include "core/dump/process_facts.h"
#include "core/format/nccl_names.h"
#include "tools/doctor/elf_inspect.h"

namespace ncclwatch::tools {
namespace {

// dlopen'ed RTLD_LOCAL so that nothing of it leaks into this process's global scope.
LibraryFound LibraryVersion(const char* soname, const char* symbol, bool nccl_style) {
  LibraryFound out;
  out.path = soname;
  void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) return out;
  out.found = true;
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(::dlsym(handle, symbol));
  Dl_info info;
  if (get && ::dladdr(reinterpret_cast<void*>(get), &info) && info.dli_fname) out.path = info.dli_fname;
  int version = 0;
  if (get && get(&version) == 0) {
    out.version = nccl_style ? format::NcclVersionText(version) : format::CudaVersionText(version);
  }
  ::dlclose(handle);
  return out;
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

ProcessSettingsFacts SettingsOf(int pid) {
  const settings::EnvVars env = settings::ReadEnvironmentOf(pid);
  ProcessSettingsFacts out;
  const settings::Settings s = settings::ParseSettings(env, &out.warnings);
  out.global_rank = s.launcher_rank.global_rank;
  out.world_size = s.launcher_rank.world_size;
  out.local_rank = s.launcher_rank.local_rank;
  out.job_id = s.job_id;
  out.stall_threshold_ns = s.stall_threshold_ns;
  out.disabled = s.disable;
  out.dump_dir = s.dump_dir;
  if (out.dump_dir.empty()) {  // the preload's default: ncclwatch-dumps/JOB under its working directory
    char cwd[4096] = {};
    const ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/cwd").c_str(), cwd, sizeof cwd - 1);
    out.dump_dir = (n > 0 ? std::string(cwd, static_cast<size_t>(n)) : std::string("<its working directory>")) +
                   "/ncclwatch-dumps/" + s.job_id;
  }
  return out;
}

}  // namespace

Result<ProcessFactsOfDoctor> InspectDoctorProcess(int pid) {
  const Result<ProcessReach> inspected = InspectProcessReach(pid);
  if (!inspected.ok()) return inspected.error();
  const ProcessReach& reach = *inspected;
  ProcessFactsOfDoctor out;
  out.pid = pid;
  out.preload_mapped = reach.preload_mapped;
  out.preload_ahead = reach.preload_ahead;
  out.static_nccl_in = reach.static_nccl_in;
  for (const LoadedNccl& nccl : reach.nccls) {
    out.nccls.push_back({nccl, DescribeArrival(nccl, reach.exe), DescribeReach(reach, nccl), DescribeServes(reach, nccl)});
  }
  out.settings = SettingsOf(pid);
  return out;
}

Result<BinaryFacts> InspectDoctorBinary(const std::string& name, const std::string& search_path) {
  BinaryFacts out;
  out.path = FindInPath(name, search_path);
  const Result<ElfFacts> inspected = InspectElf(out.path);
  if (!inspected.ok()) return inspected.error();
  const ElfFacts& facts = *inspected;
  for (const auto& needed : facts.needed) {
    if (!IsNcclLibraryName(needed)) continue;
    out.nccl = BinaryFacts::Nccl::kDynamic;
    out.needed = needed;
    out.runpath = facts.runpath;
    out.rpath = facts.rpath;
    out.verdict = out.path + " links " + needed + " dynamically: ncclwatch can interpose it";
    return out;
  }
  if (facts.defines_nccl_symbol || facts.contains_nccl_string) {
    out.nccl = BinaryFacts::Nccl::kStatic;
    out.verdict = out.path + " has NCCL linked statically (it " +
                  (facts.defines_nccl_symbol ? std::string("defines ncclAllReduce") : "contains \"ncclAllReduce\"") +
                  " and has no libnccl dependency): ncclwatch CANNOT interpose it. Use a build that links "
                  "libnccl.so.2 dynamically (e.g. the PyTorch pip wheels, not conda or source builds).";
    return out;
  }
  out.verdict = out.path + " does not link NCCL; if it loads NCCL at run time (Python, dlopen), run "
                           "`ncclwatch doctor --pid PID` on the running process";
  return out;
}

HostFacts InspectHost() {
  HostFacts out;
  out.driver.value = dump::ReadNvidiaDriverVersion();
  if (out.driver.value.rfind("545.", 0) == 0) {
    out.driver.warning = "545.x has field reports of NCCL P2P hangs; try NCCL_P2P_DISABLE=1 or another driver";
  }
  struct utsname u;
  if (::uname(&u) == 0) {
    out.kernel.value = u.release;
    if (analyze::KernelOlderThan5_5(out.kernel.value)) {
      out.kernel.warning = "older than 5.5, where NCCL hangs have been reported; 5.5+ is recommended";
    }
  }
  out.nccl = LibraryVersion("libnccl.so.2", "ncclGetVersion", true);
  out.cuda_runtime = LibraryVersion("libcudart.so.13", "cudaRuntimeGetVersion", false);
  return out;
}

}  // namespace ncclwatch::tools
