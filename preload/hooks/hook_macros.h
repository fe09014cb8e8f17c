// The uniform shape of every hook: an exported, unversioned C function that finds the
// next definition once, forwards to it, and lets the observer look at the call.
// A missing real function yields the API's own error code (never a call through NULL).
#ifndef NCCLWATCH_PRELOAD_HOOKS_HOOK_MACROS_H_
#define NCCLWATCH_PRELOAD_HOOKS_HOOK_MACROS_H_

#include "preload/real/resolver.h"

#define NCCLWATCH_EXPORT extern "C" __attribute__((visibility("default")))

// Declares `real` as the next definition of `name` for the enclosing hook; returns
// `missing` from the hook when there is none.
#define NCCLWATCH_NEXT(library, name, missing)                                                \
  static ::ncclwatch::preload::NextFunction<decltype(name)> next_##name(library, #name);     \
  auto* const real = next_##name.Get(__builtin_return_address(0));                           \
  if (real == nullptr) return missing

#endif  // NCCLWATCH_PRELOAD_HOOKS_HOOK_MACROS_H_
