// dlsym interposition: a job that looks a hooked NCCL function up by name (ctypes.CDLL
// attribute lookup, dlopen RTLD_LOCAL + dlsym as JAX/XLA and nccl4py do, RTLD_DEFAULT,
// RTLD_NEXT) gets the hook bound to the library it asked, never a hook for a function
// that library lacks. Likewise a hooked CUDA name (cuda_api_table.h): a static CUDA runtime
// (CuPy, XLA, NCCL's, cuBLAS's) dlopens libcuda.so.1 and finds cuGetProcAddress_v2 this way,
// XLA finds every driver function this way; each gets the hook bound to the function found
// (cuda_hooks.h). Every other name goes to glibc's dlsym by a tail call, so that
// glibc still sees the job's return address (RTLD_NEXT, RTLD_DEFAULT scopes) and sets
// dlerror exactly as without us.
//
// Sanitizer builds compile this file and real_dl.cc without instrumentation
// (preload/CMakeLists.txt): an ASan or TSan runtime resolves its interceptors with
// dlsym(RTLD_NEXT, ...) while it initializes, and with the preload in the process that
// lookup lands here. Instrumented code run then dies (TSan: SIGSEGV in __tsan_func_entry).
// So the pass-through path touches nothing of ours that needs initializing: a
// four-character prefix test and glibc's dlsym found by dlvsym. Only "nccl*" names, and
// "cu" names followed by "d" or a capital ("cuda*", "cuStream*"), go on to the resolvers, and
// no sanitizer runtime looks those up.
#include <dlfcn.h>

#include <atomic>
#include <string>

#include "preload/hooks/cuda_hooks.h"
#include "preload/hooks/hook_macros.h"
#include "preload/lifecycle/log.h"
#include "preload/hooks/nccl_hooks.h"
#include "preload/real/nccl_real.h"
#include "preload/real/real_dl.h"

namespace ncclwatch::preload {
namespace {

void WarnLibrariesFull() {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  try {
    Log(LogLevel::kWarn, "more than " + std::to_string(kMaxNcclLibraries - 1) +
                             " NCCL libraries reached through dlsym; the extra ones are not watched");
  } catch (...) {  // inside the job's dlsym (C ABI): a lost line, never the job
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

// `name` is a hooked CUDA name (CudaApiIndex). As for NCCL, the scope's own definition, or
// the next one behind ours; none: NULL, with dlerror as the last real lookup left it.
void* ResolveCudaName(DlsymFn* real_dlsym, void* handle, const char* name, int api) noexcept {
  void* found = real_dlsym(handle, name);
  if (found != nullptr && IsPreloadAddress(found)) found = real_dlsym(RTLD_NEXT, name);
  if (found == nullptr) return nullptr;
  void* hook = CudaHookBoundTo(api, found);
  return hook != nullptr ? hook : found;
}

// "cuda*" or "cu" and a capital: where every hooked CUDA name is, and no libc name.
inline bool CudaPrefix(const char* name) {
  return name[0] == 'c' && name[1] == 'u' && (name[2] == 'd' || (name[2] >= 'A' && name[2] <= 'Z'));
}

}  // namespace
}  // namespace ncclwatch::preload

NCCLWATCH_EXPORT void* dlsym(void* handle, const char* name) {
  using namespace ncclwatch::preload;
  DlsymFn* const real_dlsym = RealDlsym();
  if (real_dlsym == nullptr) return nullptr;  // not glibc: nothing we can forward to
  // Every hooked name starts with "nccl" (NcclApiIndex); the rest is passed on before any
  // code of ours that needs initializing runs (see the top of this file).
  // dlfcn.h declares `name` nonnull, yet glibc answers dlsym(handle, NULL) and so must we: the
  // empty asm hides the attribute from the optimizer (GCC would drop the test, and warns).
  const char* prefix = name;
  asm("" : "+r"(prefix));
  if (prefix != nullptr && CudaPrefix(prefix)) {
    const int api = CudaApiIndex(name);
    if (api >= 0) return ResolveCudaName(real_dlsym, handle, name, api);
    return real_dlsym(handle, name);  // tail call
  }
  if (prefix == nullptr || prefix[0] != 'n' || prefix[1] != 'c' || prefix[2] != 'c' || prefix[3] != 'l') {
    return real_dlsym(handle, name);  // tail call
  }
  const int api = NcclApiIndex(name);
  if (__builtin_expect(api < 0, 1)) return real_dlsym(handle, name);  // tail call
  try {
    return ResolveNcclName(real_dlsym, handle, name, api);
  } catch (...) {  // the job's dlsym (C ABI): on any failure of ours, its answer unwatched
    return real_dlsym(handle, name);
  }
}
