// One weak definition per exported driver entry point (see proc_table.h), and the table that
// cuGetProcAddress searches. Both come from the same generated list, so the table covers exactly
// what the library exports.
#include "proc_table.h"

#define NCCLSIM_WEAK extern "C" __attribute__((weak, visibility("default")))

// Ignores its arguments: on the x86-64 and AArch64 C ABIs the caller owns the argument registers
// and stack, so a function declared without parameters may be called with any.
#define NCCLSIM_PROC(base, version, per_thread, exported) \
  NCCLSIM_WEAK int exported() { return ncclsim::driver::ReportUnsupported(#exported); }
#include "proc_table.inc"
#undef NCCLSIM_PROC

namespace ncclsim::driver {
namespace {

#define NCCLSIM_PROC(base, version, per_thread, exported) \
  {#base, version, per_thread != 0, #exported, reinterpret_cast<void*>(&::exported)},
const ProcEntry kTable[] = {
#include "proc_table.inc"
};
#undef NCCLSIM_PROC

}  // namespace

const ProcEntry* ProcTable(size_t* count) {
  *count = sizeof(kTable) / sizeof(kTable[0]);
  return kTable;
}

}  // namespace ncclsim::driver
