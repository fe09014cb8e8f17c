// glibc's own dlsym, bypassing the preload's dlsym hook (dlsym_hook.cc). Found with dlvsym
// on glibc's version nodes (GLIBC_2.34, where dlsym moved into libc, then GLIBC_2.2.5),
// never with dlsym itself, which would find the hook.
#ifndef NCCLWATCH_PRELOAD_REAL_REAL_DL_H_
#define NCCLWATCH_PRELOAD_REAL_REAL_DL_H_

namespace ncclwatch::preload {

using DlsymFn = void*(void*, const char*);

// Never nullptr after the first call on a glibc system; nullptr only if glibc has neither node.
DlsymFn* RealDlsym() noexcept;

// True for addresses inside libncclwatch.so itself (i.e. a hook, never a real function).
bool IsPreloadAddress(const void* address) noexcept;

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_REAL_REAL_DL_H_
