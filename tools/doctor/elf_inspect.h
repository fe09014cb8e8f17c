// Just enough ELF reading for `doctor`: an object's DT_NEEDED list and whether it
// defines NCCL itself (a statically linked NCCL cannot be interposed).
#ifndef NCCLWATCH_TOOLS_DOCTOR_ELF_INSPECT_H_
#define NCCLWATCH_TOOLS_DOCTOR_ELF_INSPECT_H_

#include <string>
#include <vector>

#include "core/status/status.h"

namespace ncclwatch::tools {

struct ElfFacts {
  std::vector<std::string> needed;  // DT_NEEDED entries, in order
  bool defines_nccl_symbol = false; // a defined ncclAllReduce / pncclAllReduce in .symtab or .dynsym
  bool contains_nccl_string = false;  // the bytes "ncclAllReduce" appear anywhere (stripped objects)
  std::string soname;                 // DT_SONAME, empty if none
  std::string rpath;                  // DT_RPATH, unexpanded ($ORIGIN kept)
  std::string runpath;                // DT_RUNPATH, unexpanded
  std::string nccl_version;           // "2.28.9" from the "NCCL version 2.28.9+cuda13.0" banner, if any
};

// The facts of a readable 64-bit ELF file, or why `path` is not one (one line naming it).
Result<ElfFacts> InspectElf(const std::string& path);

// True for "libnccl.so", "libnccl.so.2", "/x/libnccl.so.2.28.9", ...
bool IsNcclLibraryName(const std::string& name);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_DOCTOR_ELF_INSPECT_H_
