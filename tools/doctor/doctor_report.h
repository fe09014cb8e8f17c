// What `ncclwatch doctor` found, as plain data: gathered once (doctor_report.cc), then printed as
// text or as JSON (doctor_command.cc), so that both say the same thing.
//
// Two kinds of fact, kept apart because they often differ in the field:
//   * the target's: a running process (--pid) or a binary, which is what the user asked about;
//   * the host's: what this shell finds (driver, kernel, the NCCL and CUDA runtime a dlopen by
//     name reaches here), which the process may not use.
// Every string quotes what the machine or the target supplied; printers escape it.
#ifndef NCCLWATCH_TOOLS_DOCTOR_DOCTOR_REPORT_H_
#define NCCLWATCH_TOOLS_DOCTOR_DOCTOR_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/settings/settings.h"
#include "core/status/status.h"
#include "tools/doctor/nccl_reach.h"

namespace ncclwatch::tools {

// A fact with an optional warning that points at a known field cause.
struct Checked {
  std::string value;    // "" when unknown
  std::string warning;  // "" when nothing is known against it
};

struct LibraryFound {
  bool found = false;
  std::string path;     // resolved object, or the soname asked for when not found
  std::string version;  // "2.28.9", "13.0"; "" when the version call failed
};

struct HostFacts {
  Checked driver;  // NVIDIA driver version; value "" when no driver
  Checked kernel;  // uname -r
  LibraryFound nccl;          // dlopen("libnccl.so.2") from this shell
  LibraryFound cuda_runtime;  // dlopen("libcudart.so.13")
};

// The settings ncclwatch in the process runs with, as its environment gives them.
struct ProcessSettingsFacts {
  int global_rank = -1;  // -1: no launcher gave one
  int world_size = -1;
  int local_rank = -1;
  std::string job_id;
  uint64_t stall_threshold_ns = 0;
  std::string dump_dir;  // where its dumps go (its working directory's default spelled out)
  bool disabled = false;
  std::vector<std::string> warnings;  // what the preload would warn about its settings
};

struct LoadedNcclFacts {
  LoadedNccl nccl;
  std::string came_by;  // DescribeArrival
  std::string reached;  // DescribeReach
  std::string serves;   // DescribeServes
};

struct ProcessFactsOfDoctor {
  int pid = 0;
  bool preload_mapped = false;
  bool preload_ahead = false;
  std::vector<LoadedNcclFacts> nccls;
  std::string static_nccl_in;
  ProcessSettingsFacts settings;
};

struct BinaryFacts {
  std::string path;
  enum class Nccl { kDynamic, kStatic, kNone } nccl = Nccl::kNone;
  std::string needed;  // the libnccl soname it needs (kDynamic)
  std::string runpath, rpath;
  std::string verdict;  // one sentence: whether ncclwatch can interpose it, and what to do
};

struct DoctorReport {
  std::optional<ProcessFactsOfDoctor> process;  // --pid, or this process as a dlopen user
  bool process_is_self = false;                 // no target given: this process stands in
  std::optional<BinaryFacts> binary;            // BINARY
  std::map<std::string, std::string> nccl_env;  // the target's NCCL_* (this shell's without --pid)
  std::string nccl_env_of;                      // "pid N" or "this shell"
  HostFacts host;
};

// Gathers what doctor reports about `pid`. Fails (one line) only when the process cannot be
// read; then nothing else is gathered.
Result<ProcessFactsOfDoctor> InspectDoctorProcess(int pid);
// What `name` (a path, or a name looked up in `search_path`) links; fails when it is not a
// readable 64-bit ELF file.
Result<BinaryFacts> InspectDoctorBinary(const std::string& name, const std::string& search_path);
HostFacts InspectHost();

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_DOCTOR_DOCTOR_REPORT_H_
