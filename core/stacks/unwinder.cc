#include "core/stacks/unwinder.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <execinfo.h>
#include <libunwind.h>

#include <cstdlib>
#include <cstring>

#include "core/stacks/armed_options.h"

namespace ncclwatch::stacks_internal {
namespace {

// libunwind's exported names for the macros of <libunwind.h> (e.g. unw_step is
// _ULx86_64_step): the library is dlopen'ed, never linked.
#define NCCLWATCH_UNW_NAME_(symbol) #symbol
#define NCCLWATCH_UNW_NAME(macro) NCCLWATCH_UNW_NAME_(macro)

// The cursor API, not unw_backtrace. unw_backtrace keeps a per-thread trace cache in
// libunwind.so.8's __thread variables (its only TLS, 16 bytes in 1.6.2: Gtrace.c). The
// library is dlopen'ed, so that TLS is dynamic: a thread's first access goes through
// __tls_get_addr, which mallocs the block. In the handler, that malloc can interrupt a
// job thread holding the malloc lock and deadlock it (TSan reported it: signal-unsafe
// call inside a signal). The cache also registers a pthread key whose destructor frees
// it at thread exit, which crashed under TSan. unw_getcontext/unw_init_local/unw_step
// keep all their state in the cursor and context on the handler's stack (about 2 KB,
// what unw_backtrace itself used); libunwind's unwind-info caches are process-wide and
// guarded with every signal blocked, so no thread can be interrupted while holding them.
struct Libunwind {
  int (*getcontext)(unw_context_t*) = nullptr;
  int (*init_local)(unw_cursor_t*, unw_context_t*) = nullptr;
  int (*step)(unw_cursor_t*) = nullptr;
  int (*get_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t*) = nullptr;
};

// Set once by LoadUnwinder, before any signal is sent; read-only afterwards.
Libunwind g_libunwind;

bool BacktraceForced() {
  return ArmedOptions().backtrace_unwinder;
}

template <typename Function>
bool Resolve(void* handle, const char* name, Function* function) {
  *function = reinterpret_cast<Function>(dlsym(handle, name));
  return *function != nullptr;
}

bool LoadLibunwind() {
  // RTLD_LOCAL keeps libunwind's _Unwind_* out of the global scope.
  void* handle = dlopen("libunwind.so.8", RTLD_LOCAL | RTLD_NOW);
  if (handle == nullptr) return false;
  Libunwind api;
  if (!Resolve(handle, NCCLWATCH_UNW_NAME(unw_tdep_getcontext), &api.getcontext) ||
      !Resolve(handle, NCCLWATCH_UNW_NAME(unw_init_local), &api.init_local) ||
      !Resolve(handle, NCCLWATCH_UNW_NAME(unw_step), &api.step) ||
      !Resolve(handle, NCCLWATCH_UNW_NAME(unw_get_reg), &api.get_reg)) {
    return false;
  }
  g_libunwind = api;
  return true;
}

// Async-signal-safe (see Libunwind above); same contract as unw_backtrace.
__attribute__((noinline)) int LibunwindBacktrace(void** buffer, int size) {
  unw_context_t context;
  unw_cursor_t cursor;
  if (size <= 0 || g_libunwind.getcontext(&context) != 0 || g_libunwind.init_local(&cursor, &context) != 0) {
    return 0;
  }
  int depth = 0;
  while (depth < size) {
    unw_word_t pc = 0;
    if (g_libunwind.get_reg(&cursor, UNW_REG_IP, &pc) != 0 || pc == 0) break;
    buffer[depth++] = reinterpret_cast<void*>(pc);
    if (g_libunwind.step(&cursor) <= 0) break;
  }
  return depth;
}

void WarmUp(UnwindFunction unwind) {
  void* frames[8];
  unwind(frames, 8);
}

}  // namespace

Unwinder LoadUnwinder() {
  Unwinder unwinder;
  if (!BacktraceForced() && LoadLibunwind()) unwinder = {&LibunwindBacktrace, "libunwind"};
  // glibc's backtrace() unwinds with libgcc_s, which has no TLS; its first call dlopens
  // libgcc_s, hence the warm-up.
  if (unwinder.unwind == nullptr) unwinder = {&backtrace, "backtrace"};
  WarmUp(unwinder.unwind);
  return unwinder;
}

}  // namespace ncclwatch::stacks_internal
