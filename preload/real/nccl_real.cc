#include "preload/real/nccl_real.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "preload/hooks/hot_path.h"
#include "preload/hooks/keep_errno.h"
#include "preload/real/real_dl.h"
#include "preload/real/resolver.h"

namespace ncclwatch::preload {

namespace nccl_real_detail {
std::atomic<void*> global_functions[kNcclApiCount] = {};
std::atomic<int> g_libraries_used{1};
}  // namespace nccl_real_detail

namespace {

constexpr const char* kApiNames[] = {
#define NCCLWATCH_API_NAME(kind, name, params, args, track) #name,
    NCCLWATCH_NCCL_API(NCCLWATCH_API_NAME)
#undef NCCLWATCH_API_NAME
};

// Functions the observer calls itself (not hooked), per library too.
constexpr const char* kHelperNames[] = {"ncclCommUserRank", "ncclCommCount", "ncclCommCuDevice",
                                        "ncclCommQueryProperties"};
constexpr int kHelperCount = sizeof(kHelperNames) / sizeof(kHelperNames[0]);

struct LibraryTable {
  std::atomic<const void*> base{nullptr};  // dli_fbase of the library; set last
  std::atomic<void*> functions[kNcclApiCount] = {};
  std::atomic<void*> helpers[kHelperCount] = {};
};

// [1..]: libraries reached through dlsym. Slot 0's functions are nccl_real_detail's
// global_functions (read inline by the hooks); its helpers are here.
LibraryTable g_libraries[kMaxNcclLibraries];
std::atomic<bool> g_reported_missing[kNcclApiCount] = {};
using nccl_real_detail::g_libraries_used;
std::mutex g_register_mu;  // taken only when a library is seen for the first time

// Which library created each communicator; fixed table, linear probing, never erased
// (a reused handle is overwritten by its new init). 256 is far above the communicators
// a process creates.
constexpr uint32_t kCommCapacity = 256;
struct CommLibrary {
  std::atomic<uint64_t> handle{0};
  std::atomic<int> slot{0};
};
CommLibrary g_comm_library[kCommCapacity];

uint32_t Home(uint64_t handle) { return static_cast<uint32_t>((handle >> 4) * 0x9E3779B97F4A7C15ull >> 56); }

NCCLWATCH_HOT int CommSlot(ncclComm_t comm) {
  if (g_libraries_used.load(std::memory_order_relaxed) == 1 || comm == nullptr) return 0;
  const auto handle = reinterpret_cast<uint64_t>(comm);
  for (uint32_t i = 0, b = Home(handle); i < kCommCapacity; ++i, b = (b + 1) % kCommCapacity) {
    const uint64_t h = g_comm_library[b].handle.load(std::memory_order_acquire);
    if (h == handle) return g_comm_library[b].slot.load(std::memory_order_relaxed);
    if (h == 0) return 0;
  }
  return 0;
}

// The library's own definition: `pnccl*` (never ours) first, then `nccl*` if not ours.
void* Lookup(void* handle, const char* name) {
  DlsymFn* const dlsym_fn = RealDlsym();
  if (dlsym_fn == nullptr) return nullptr;
  const std::string primary = std::string("p") + name;
  if (void* fn = dlsym_fn(handle, primary.c_str()); fn != nullptr) return fn;
  void* fn = dlsym_fn(handle, name);
  return IsPreloadAddress(fn) ? nullptr : fn;
}

void Fill(LibraryTable* table, void* handle) {
  for (int i = 0; i < kNcclApiCount; ++i) table->functions[i].store(Lookup(handle, kApiNames[i]));
  for (int i = 0; i < kHelperCount; ++i) table->helpers[i].store(Lookup(handle, kHelperNames[i]));
}

int FindSlot(const void* base) {
  const int used = g_libraries_used.load(std::memory_order_acquire);
  for (int slot = 1; slot < used; ++slot) {
    if (g_libraries[slot].base.load(std::memory_order_acquire) == base) return slot;
  }
  return -1;
}

int RegisterLibrary(const Dl_info& info) {
  const std::lock_guard<std::mutex> lock(g_register_mu);
  if (const int slot = FindSlot(info.dli_fbase); slot > 0) return slot;
  const int slot = g_libraries_used.load();
  if (slot >= kMaxNcclLibraries) return -1;
  void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return -1;
  Fill(&g_libraries[slot], handle);
  dlclose(handle);  // drops only the reference RTLD_NOLOAD added
  g_libraries[slot].base.store(info.dli_fbase, std::memory_order_release);
  g_libraries_used.store(slot + 1, std::memory_order_release);
  return slot;
}

NCCLWATCH_HOT void* GlobalFunction(NcclApi api, const void* caller) {
  std::atomic<void*>& cached = nccl_real_detail::global_functions[static_cast<int>(api)];
  void* fn = cached.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  fn = ResolveNext(Library::kNccl, NcclApiName(api), caller);
  if (fn != nullptr) {
    cached.store(fn, std::memory_order_release);
  } else {
    ReportMissingFunction(NcclApiName(api), &g_reported_missing[static_cast<int>(api)]);
  }
  return fn;
}

}  // namespace

const char* NcclApiName(NcclApi api) { return kApiNames[static_cast<int>(api)]; }

int NcclApiIndex(const char* name) noexcept {
  if (name == nullptr || std::strncmp(name, "nccl", 4) != 0) return -1;
  for (int i = 0; i < kNcclApiCount; ++i) {
    if (std::strcmp(name, kApiNames[i]) == 0) return i;
  }
  return -1;
}

void* RealNcclSlowPath(NcclApi api, int slot, ncclComm_t comm, const void* caller) noexcept {
  // Runs before the hook's errno guard (nccl_hook.h): a first lookup may dlopen and log.
  const KeepErrno keep;
  if (slot == 0) slot = CommSlot(comm);
  if (slot == 0) return GlobalFunction(api, caller);
  void* fn = g_libraries[slot].functions[static_cast<int>(api)].load(std::memory_order_relaxed);
  if (fn == nullptr) ReportMissingFunction(NcclApiName(api), &g_reported_missing[static_cast<int>(api)]);
  return fn;
}

int NcclLibrarySlot(const void* real_symbol) noexcept {
  Dl_info info{};
  if (real_symbol == nullptr || dladdr(real_symbol, &info) == 0 || info.dli_fname == nullptr ||
      info.dli_fname[0] == '\0') {
    return -1;
  }
  if (const int slot = FindSlot(info.dli_fbase); slot > 0) return slot;
  try {
    return RegisterLibrary(info);
  } catch (...) {  // inside an NCCL hook (C ABI): the library stays unregistered, its calls unwatched
    return -1;
  }
}

void* NcclLibraryFunction(int slot, NcclApi api) noexcept {
  if (slot <= 0 || slot >= kMaxNcclLibraries) return nullptr;
  return g_libraries[slot].functions[static_cast<int>(api)].load(std::memory_order_acquire);
}

void RememberCommLibrary(ncclComm_t comm, int slot) noexcept {
  if (comm == nullptr || (slot == 0 && g_libraries_used.load(std::memory_order_relaxed) == 1)) return;
  const auto handle = reinterpret_cast<uint64_t>(comm);
  for (uint32_t i = 0, b = Home(handle); i < kCommCapacity; ++i, b = (b + 1) % kCommCapacity) {
    uint64_t expected = g_comm_library[b].handle.load(std::memory_order_acquire);
    if (expected == 0 && !g_comm_library[b].handle.compare_exchange_strong(expected, handle)) {
      // another init took this bucket meanwhile; `expected` now holds its handle
    }
    if (g_comm_library[b].handle.load(std::memory_order_acquire) == handle) {
      g_comm_library[b].slot.store(slot, std::memory_order_relaxed);
      return;
    }
  }
}

void* RealNcclHelper(const char* name, ncclComm_t comm) noexcept {
  int index = 0;
  while (index < kHelperCount && std::strcmp(kHelperNames[index], name) != 0) ++index;
  if (index == kHelperCount) return nullptr;
  const int slot = CommSlot(comm);
  std::atomic<void*>& cached = g_libraries[slot].helpers[index];
  void* fn = cached.load(std::memory_order_acquire);
  if (fn == nullptr && slot == 0) {
    fn = ResolveNext(Library::kNccl, name, nullptr);
    if (fn != nullptr) cached.store(fn, std::memory_order_release);
  }
  return fn;
}

}  // namespace ncclwatch::preload
