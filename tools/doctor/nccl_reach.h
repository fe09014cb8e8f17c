// How a running process reached NCCL, and whether ncclwatch's hooks stand in front of it,
// for `ncclwatch doctor --pid`. Read from /proc/PID/{maps,exe}, its environment (LD_PRELOAD,
// LD_LIBRARY_PATH, through core/settings ReadEnvironmentOf), /etc/ld.so.preload
// and the ELF dynamic sections of the mapped objects; the process itself is not touched.
//
// Rules (preload/README.md, "How a job reaches the hooks"):
//  - libncclwatch.so interposes only when it is in the global scope ahead of libnccl:
//    LD_PRELOAD (or /etc/ld.so.preload) and not after a libnccl listed there;
//  - then a library reached through NEEDED (of the program, of one of its libraries, or of
//    a dlopen'ed object such as a Python extension) binds to the hooks, and one dlopen'ed
//    by name is reached through the dlsym hook (ctypes, dlopen + dlsym);
//  - NCCL linked statically into an object is never reached: no symbol to interpose.
#ifndef NCCLWATCH_TOOLS_DOCTOR_NCCL_REACH_H_
#define NCCLWATCH_TOOLS_DOCTOR_NCCL_REACH_H_

#include <string>
#include <vector>

#include "core/status/status.h"

namespace ncclwatch::tools {

enum class NcclArrival {
  kPreloaded,      // listed in LD_PRELOAD / /etc/ld.so.preload itself
  kNeededByProgram,// DT_NEEDED of the main program
  kNeededInClosure,// DT_NEEDED of a library in the program's NEEDED closure
  kNeededByDlopened,  // DT_NEEDED of an object outside that closure, i.e. one that was dlopen'ed
  kDlopened,       // no loaded object needs it: dlopen'ed by name or path
};

struct LoadedNccl {
  std::string path;     // as mapped
  std::string version;  // "2.28.9", from the file name or the library's banner; empty if unknown
  NcclArrival arrival = NcclArrival::kDlopened;
  std::string needed_by;  // the object whose DT_NEEDED names it (NEEDED arrivals)
  std::string search;     // how the directory was found: "RUNPATH <value> of <object>", ...
};

struct ProcessReach {
  std::string exe;
  std::vector<LoadedNccl> nccls;     // every mapped libnccl.so*, sorted by path
  std::string static_nccl_in;        // an object that defines ncclAllReduce itself, if any
  bool preload_mapped = false;       // libncclwatch.so is mapped
  bool preload_ahead = false;        // ... and preloaded ahead of any preloaded libnccl
};

// What the process `pid` has mapped, or why it cannot be read (one line).
Result<ProcessReach> InspectProcessReach(int pid);

// "NEEDED of the main program /x/app", "dlopen'ed by name or path (...)", ...
std::string DescribeArrival(const LoadedNccl& nccl, const std::string& exe);

// One line: whether ncclwatch's hooks reach calls into `nccl`, and why.
std::string DescribeReach(const ProcessReach& reach, const LoadedNccl& nccl);

// One line: whose calls `nccl` serves, by the dynamic linker's rules. A NEEDED (or preloaded)
// copy serves every caller that binds NCCL's names in the global scope, the first such copy
// loaded winning when there are several; a copy that only a dlopen brought in serves only the
// callers holding that handle (ctypes, dlopen + dlsym: JAX, vLLM's pynccl).
std::string DescribeServes(const ProcessReach& reach, const LoadedNccl& nccl);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_DOCTOR_NCCL_REACH_H_
