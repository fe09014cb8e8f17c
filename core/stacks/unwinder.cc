#include "core/stacks/unwinder.h"

#include <dlfcn.h>
#include <execinfo.h>

#include <cstdlib>
#include <cstring>

#include "core/stacks/armed_options.h"

namespace ncclwatch::stacks_internal {
namespace {

bool BacktraceForced() {
  return ArmedOptions().backtrace_unwinder;
}

UnwindFunction LoadLibunwindBacktrace() {
  // RTLD_LOCAL keeps libunwind's _Unwind_* out of the global scope.
  void* handle = dlopen("libunwind.so.8", RTLD_LOCAL | RTLD_NOW);
  if (handle == nullptr) return nullptr;
  return reinterpret_cast<UnwindFunction>(dlsym(handle, "unw_backtrace"));
}

void WarmUp(UnwindFunction unwind) {
  void* frames[8];
  unwind(frames, 8);
}

}  // namespace

Unwinder LoadUnwinder() {
  Unwinder unwinder;
  if (!BacktraceForced()) {
    if (UnwindFunction libunwind = LoadLibunwindBacktrace()) {
      unwinder = {libunwind, "libunwind"};
    }
  }
  if (unwinder.unwind == nullptr) unwinder = {&backtrace, "backtrace"};
  WarmUp(unwinder.unwind);
  return unwinder;
}

}  // namespace ncclwatch::stacks_internal
