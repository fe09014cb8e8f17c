// Async-signal-safe stack walking, chosen once before any signal is sent.
//
// libunwind is preferred (it steps through signal frames reliably) but is only
// ever dlopen'ed RTLD_LOCAL: linking it, or loading it RTLD_GLOBAL, would put
// its _Unwind_* exports ahead of libgcc_s and take over the host's C++
// exception unwinding. It is driven through its cursor API (unw_step), never
// unw_backtrace, whose per-thread cache lives in lazily allocated TLS that a signal
// handler must not touch (unwinder.cc says why). glibc backtrace() is the fallback.
#ifndef NCCLWATCH_CORE_STACKS_UNWINDER_H_
#define NCCLWATCH_CORE_STACKS_UNWINDER_H_

namespace ncclwatch::stacks_internal {

// Same signature as unw_backtrace and backtrace: fills up to `size` return
// addresses, innermost first, and returns how many were written.
using UnwindFunction = int (*)(void** buffer, int size);

struct Unwinder {
  UnwindFunction unwind = nullptr;
  const char* name = "none";
};

// Loads and warms up the unwinder (first calls may dlopen or allocate, which a
// signal handler must never do). Not signal-safe; call once before signalling.
// NCCLWATCH_STACK_UNWINDER=backtrace forces the glibc fallback.
Unwinder LoadUnwinder();

}  // namespace ncclwatch::stacks_internal

#endif  // NCCLWATCH_CORE_STACKS_UNWINDER_H_
