// dlsym interposition: a job that looks a hooked NCCL function up by name (ctypes.CDLL
// attribute lookup, dlopen RTLD_LOCAL + dlsym as JAX/XLA and nccl4py do, RTLD_DEFAULT,
// RTLD_NEXT) gets the hook bound to the library it asked, never a hook for a function
// that library lacks. Every other name goes to glibc's dlsym by a tail call, so that
// glibc still sees the job's return address (RTLD_NEXT, RTLD_DEFAULT scopes) and sets
// dlerror exactly as without us.
#include <dlfcn.h>

#include <atomic>
#include <string>

#include "preload/hook_macros.h"
#include "preload/log.h"
#include "preload/nccl_hooks.h"
#include "preload/nccl_real.h"
#include "preload/real_dl.h"

namespace ncclwatch::preload {
namespace {

void WarnLibrariesFull() {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  try {
    Log(LogLevel::kWarn, "more than " + std::to_string(kMaxNcclLibraries - 1) +
                             " NCCL libraries reached through dlsym; the extra ones are not watched");
  } catch (...) {
  }
}

// The hook for `api` bound to the library that defines `real`; `real` itself (unwatched)
// when no library slot is left.
void* HookBoundTo(int api, void* real) {
  const int slot = NcclLibrarySlot(real);
  if (slot < 0) {
    WarnLibrariesFull();
    return real;
  }
  void* hook = NcclLibraryFunction(slot, static_cast<NcclApi>(api)) != nullptr ? NcclHookForLibrary(api, slot)
                                                                               : nullptr;
  return hook != nullptr ? hook : real;
}

// `name` is a hooked NCCL name. The last real lookup made decides dlerror's state.
void* ResolveNcclName(DlsymFn* real_dlsym, void* handle, const char* name, int api) {
  void* found = real_dlsym(handle, name);
  if (found == nullptr) return nullptr;  // absent in that scope: dlerror as without us
  if (!IsPreloadAddress(found)) return HookBoundTo(api, found);
  // The scope holds our own export (RTLD_DEFAULT, dlopen(NULL)): what is behind it? NCCL's
  // strong pnccl* name, else the next definition after us. Neither: the feature is absent.
  const std::string primary = std::string("p") + name;
  void* behind = real_dlsym(handle, primary.c_str());
  if (behind == nullptr) behind = real_dlsym(RTLD_NEXT, name);
  return behind != nullptr ? HookBoundTo(api, behind) : nullptr;
}

}  // namespace
}  // namespace ncclwatch::preload

NCCLWATCH_EXPORT void* dlsym(void* handle, const char* name) {
  using namespace ncclwatch::preload;
  DlsymFn* const real_dlsym = RealDlsym();
  if (real_dlsym == nullptr) return nullptr;  // not glibc: nothing we can forward to
  const int api = NcclApiIndex(name);
  if (__builtin_expect(api < 0, 1)) return real_dlsym(handle, name);  // tail call
  try {
    return ResolveNcclName(real_dlsym, handle, name, api);
  } catch (...) {
    return real_dlsym(handle, name);
  }
}
