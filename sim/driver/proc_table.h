// The table of every exported driver entry point, generated from cudaTypedefs.h
// (gen_proc_table.cmake), and the fallback for the ones the sim does not implement.
//
// Deliberately free of cuda.h: fallbacks.cc defines a weak, argument-ignoring definition for every
// exported name, which would clash with cuda.h's prototypes. A real implementation elsewhere in the
// library is a strong definition and wins at link time, so "unsupported" is simply "not written".
#ifndef NCCLWATCH_SIM_DRIVER_PROC_TABLE_H_
#define NCCLWATCH_SIM_DRIVER_PROC_TABLE_H_

#include <cstddef>

namespace ncclsim::driver {

struct ProcEntry {
  const char* base;      // name a caller asks cuGetProcAddress for, e.g. "cuMemAlloc"
  int version;           // CUDA release that introduced this ABI variant, e.g. 3020
  bool per_thread;       // a _ptsz/_ptds variant
  const char* exported;  // its exported symbol, e.g. "cuMemAlloc_v2"
  void* address;
};

// All entries, in no particular order; `*count` receives their number.
const ProcEntry* ProcTable(size_t* count);

// Prints "ncclsim libcuda: <name> is not supported" to stderr the first time per name and returns
// CUDA_ERROR_NOT_SUPPORTED (801) as an int.
int ReportUnsupported(const char* name);

// True when NCCLSIM_DRIVER_DEBUG=1: unknown cuGetProcAddress names are logged once.
bool DebugEnabled();

}  // namespace ncclsim::driver

#endif  // NCCLWATCH_SIM_DRIVER_PROC_TABLE_H_
