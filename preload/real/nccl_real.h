// The real NCCL functions behind the hooks, per NCCL library in the process.
//
// Slot 0 is the global scope: each function is found on first use by resolver.h (RTLD_NEXT,
// the caller's library, an already loaded libnccl.so.2). Slots 1..kMaxNcclLibraries-1 are
// libraries a job reached through dlsym (ctypes, dlopen RTLD_LOCAL as JAX/XLA does): a slot
// is taken, and its whole table filled, the first time a hooked name is dlsym'ed from that
// library; lookups after that are one atomic load, with no lock and no allocation.
//
// Routing: a hook handed out by dlsym knows its slot. A hook reached through the global
// scope (slot 0) calls the library that created the communicator it is given, when that
// was another slot, so that torch's and JAX's NCCL can live in one process.
#ifndef NCCLWATCH_PRELOAD_REAL_NCCL_REAL_H_
#define NCCLWATCH_PRELOAD_REAL_NCCL_REAL_H_

#include <nccl.h>

#include <atomic>
#include <cstdint>

#include "preload/hooks/nccl_api_table.h"

namespace ncclwatch::preload {

enum class NcclApi : uint16_t {
#define NCCLWATCH_API_ENUM(kind, name, params, args, track) name,
  NCCLWATCH_NCCL_API(NCCLWATCH_API_ENUM)
#undef NCCLWATCH_API_ENUM
  kCount
};
inline constexpr int kNcclApiCount = static_cast<int>(NcclApi::kCount);
inline constexpr int kMaxNcclLibraries = 4;  // slot 0 (global scope) + 3 dlsym'ed libraries

const char* NcclApiName(NcclApi api);
// The hooked API called `name` (e.g. "ncclAllReduce"), or -1. Cheap for names not
// starting with "nccl".
int NcclApiIndex(const char* name) noexcept;

namespace nccl_real_detail {
// The global scope's functions, resolved on first use, and how many library slots are in use
// (1: only the global scope). Read inline by every hook.
extern std::atomic<void*> global_functions[kNcclApiCount];
extern std::atomic<int> g_libraries_used;
}  // namespace nccl_real_detail

void* RealNcclSlowPath(NcclApi api, int slot, ncclComm_t comm, const void* caller) noexcept;

// The real function; nullptr when that library lacks it (logged once per name). Inline, for
// the common case of a job with one NCCL whose function was already resolved: two loads
// instead of a call of 21 instructions, three times per group.
inline void* RealNccl(NcclApi api, int slot, ncclComm_t comm, const void* caller) noexcept {
  if (slot == 0 && (comm == nullptr || nccl_real_detail::g_libraries_used.load(std::memory_order_relaxed) == 1)) {
    void* fn = nccl_real_detail::global_functions[static_cast<int>(api)].load(std::memory_order_acquire);
    if (fn != nullptr) [[likely]] return fn;
  }
  return RealNcclSlowPath(api, slot, comm, caller);
}

// The slot of the library that defines `real_symbol` (found by the real dlsym), taking a
// free slot and filling its table on first sight; -1 when all slots are taken.
int NcclLibrarySlot(const void* real_symbol) noexcept;
// The library's own definition of `api` in `slot` (nullptr when it lacks it).
void* NcclLibraryFunction(int slot, NcclApi api) noexcept;

// Remembers which library created `comm` (called after every successful init).
void RememberCommLibrary(ncclComm_t comm, int slot) noexcept;

// A non-hooked NCCL function (e.g. "ncclCommUserRank") of the library that created `comm`.
void* RealNcclHelper(const char* name, ncclComm_t comm) noexcept;

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_REAL_NCCL_REAL_H_
