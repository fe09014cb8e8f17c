// The CUDA hooks, generated from cuda_api_table.h. Per row: one body (the guard of
// cuda_hook.h around a call of the real function it is given), the exported, unversioned
// function (the real one: the next definition), and kMaxCudaBindings trampolines that
// lookups hand out, each bound to the function one lookup found (cuda_hooks.h).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string>
#include <type_traits>

#include "preload/hooks/cuda_api_table.h"
#include "preload/hooks/cuda_hook.h"
#include "preload/hooks/cuda_hooks.h"
#include "preload/hooks/hook_macros.h"
#include "preload/hooks/hot_path.h"
#include "preload/lifecycle/log.h"
#include "preload/real/real_dl.h"

// Each exported name is its own hook: undo cuda.h's and cuda_runtime_api.h's renaming macros.
#undef cuGetProcAddress
#undef cuStreamBeginCapture
#undef cuStreamBeginCaptureToGraph
#undef cuStreamEndCapture
#undef cudaStreamBeginCapture
#undef cudaStreamBeginCaptureToGraph
#undef cudaStreamEndCapture

// A host sync sits on the step's path with the ops (hot_path.h); captures and lookups are rare.
#define NCCLWATCH_CUDA_KIND_ATTRIBUTES_sync NCCLWATCH_HOT
#define NCCLWATCH_CUDA_KIND_ATTRIBUTES_capture
#define NCCLWATCH_CUDA_KIND_ATTRIBUTES_lookup

namespace ncclwatch::preload {
namespace {

enum class CudaHook : int {
#define NCCLWATCH_CUDA_ENUM(kind, library, result, name, params, args, missing, track) name,
  NCCLWATCH_CUDA_API(NCCLWATCH_CUDA_ENUM)
#undef NCCLWATCH_CUDA_ENUM
      kCount
};
constexpr int kCudaApiCount = static_cast<int>(CudaHook::kCount);

constexpr const char* kNames[] = {
#define NCCLWATCH_CUDA_NAME(kind, library, result, name, params, args, missing, track) #name,
    NCCLWATCH_CUDA_API(NCCLWATCH_CUDA_NAME)
#undef NCCLWATCH_CUDA_NAME
};
constexpr bool kDriverRow[] = {
#define NCCLWATCH_CUDA_IS_DRIVER(kind, library, result, name, params, args, missing, track) \
  Library::library == Library::kDriver,
    NCCLWATCH_CUDA_API(NCCLWATCH_CUDA_IS_DRIVER)
#undef NCCLWATCH_CUDA_IS_DRIVER
};

// bound[row][slot]: the function trampoline `slot` of the row forwards to; null while free.
// Taken once, never released (a handed-out pointer may be called for the process's life).
std::atomic<void*> g_bound[kCudaApiCount][kMaxCudaBindings];

#define NCCLWATCH_DEFINE_CUDA_BODY(kind, library, result, name, params, args, missing, track) \
  NCCLWATCH_CUDA_KIND_ATTRIBUTES_##kind result name##_via NCCLWATCH_CUDA_PARAMS_WITH_REAL params { \
    NCCLWATCH_CUDA_HOOK_BODY(result, params, args, track);                                    \
  }
NCCLWATCH_CUDA_API(NCCLWATCH_DEFINE_CUDA_BODY)
#undef NCCLWATCH_DEFINE_CUDA_BODY

#define NCCLWATCH_DEFINE_CUDA_TRAMPOLINE(kind, library, result, name, params, args, missing, track)          \
  template <int kSlot>                                                                                     \
  NCCLWATCH_CUDA_KIND_ATTRIBUTES_##kind result name##_at params {                                         \
    void* const real_fn = g_bound[static_cast<int>(CudaHook::name)][kSlot].load(std::memory_order_acquire); \
    return name##_via NCCLWATCH_CUDA_ARGS_WITH_REAL args;                                                  \
  }
NCCLWATCH_CUDA_API(NCCLWATCH_DEFINE_CUDA_TRAMPOLINE)
#undef NCCLWATCH_DEFINE_CUDA_TRAMPOLINE

void* Trampoline(CudaHook api, int slot) {
  static_assert(kMaxCudaBindings == 4);
  switch (api) {
#define NCCLWATCH_CUDA_TRAMPOLINE_CASE(kind, library, result, name, params, args, missing, track) \
  case CudaHook::name: {                                                                         \
    using Fn = result params;                                                                   \
    static constexpr Fn* kBySlot[] = {&name##_at<0>, &name##_at<1>, &name##_at<2>, &name##_at<3>}; \
    return reinterpret_cast<void*>(kBySlot[slot]);                                              \
  }
    NCCLWATCH_CUDA_API(NCCLWATCH_CUDA_TRAMPOLINE_CASE)
#undef NCCLWATCH_CUDA_TRAMPOLINE_CASE
    case CudaHook::kCount:
      break;
  }
  return nullptr;
}

void WarnBindingsFull(const char* name) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  try {
    Log(LogLevel::kWarn, std::string("more than ") + std::to_string(kMaxCudaBindings) + " definitions of " + name +
                             " looked up; the extra ones are not watched");
  } catch (...) {  // inside a CUDA entry-point lookup (C ABI): a lost line, never the job
  }
}

void LogNotExported(const char* symbol) {
  static std::atomic<bool> logged{false};
  if (logged.exchange(true) || !LogEnabled(LogLevel::kDebug)) return;
  try {
    Log(LogLevel::kDebug, std::string("the driver's ") + symbol +
                              " is no exported function of its library; handed out unwatched (logged once)");
  } catch (...) {  // as above
  }
}

// True when `exported` is `base` or one of its ABI variants: `base` followed by _v<N>, _ptsz
// and _ptds suffixes only ("cuStreamBeginCapture_v2_ptsz"; never "cuStreamBeginCaptureToGraph").
bool IsVariantOf(const char* exported, const char* base) {
  const size_t n = std::strlen(base);
  if (std::strncmp(exported, base, n) != 0) return false;
  for (const char* rest = exported + n; *rest != '\0';) {
    if (std::strncmp(rest, "_ptsz", 5) == 0 || std::strncmp(rest, "_ptds", 5) == 0) {
      rest += 5;
    } else if (rest[0] == '_' && rest[1] == 'v' && rest[2] >= '0' && rest[2] <= '9') {
      for (rest += 2; *rest >= '0' && *rest <= '9'; ++rest) {
      }
    } else {
      return false;
    }
  }
  return true;
}

bool NamesDriverRow(const char* base) {
  for (int i = 0; i < kCudaApiCount; ++i) {
    if (kDriverRow[i] && IsVariantOf(kNames[i], base)) return true;
  }
  return false;
}

}  // namespace

int CudaApiIndex(const char* name) noexcept {
  if (name == nullptr) return -1;
  for (int i = 0; i < kCudaApiCount; ++i) {
    if (std::strcmp(name, kNames[i]) == 0) return i;
  }
  return -1;
}

void* CudaHookBoundTo(int api, void* real) noexcept {
  if (api < 0 || api >= kCudaApiCount || real == nullptr) return nullptr;
  for (int slot = 0; slot < kMaxCudaBindings; ++slot) {
    std::atomic<void*>& bound = g_bound[api][slot];
    void* current = bound.load(std::memory_order_acquire);
    if (current == nullptr && bound.compare_exchange_strong(current, real, std::memory_order_acq_rel)) {
      current = real;
    }
    if (current == real) return Trampoline(static_cast<CudaHook>(api), slot);
  }
  WarnBindingsFull(kNames[api]);
  return real;
}

void* CudaHookForEntryPoint(const char* symbol, void* found) noexcept {
  if (symbol == nullptr || found == nullptr || !NamesDriverRow(symbol) || IsPreloadAddress(found)) return found;
  Dl_info info{};
  if (dladdr(found, &info) == 0 || info.dli_saddr != found || info.dli_sname == nullptr) {
    LogNotExported(symbol);
    return found;
  }
  const int api = CudaApiIndex(info.dli_sname);
  if (api < 0 || !kDriverRow[api] || !IsVariantOf(kNames[api], symbol)) return found;
  void* hook = CudaHookBoundTo(api, found);
  return hook != nullptr ? hook : found;
}

}  // namespace ncclwatch::preload

#define NCCLWATCH_DEFINE_CUDA_EXPORT(kind, library, result, name, params, args, missing, track)           \
  NCCLWATCH_EXPORT NCCLWATCH_CUDA_KIND_ATTRIBUTES_##kind result name params {                             \
    static ::ncclwatch::preload::NextFunction<result params> next(::ncclwatch::preload::Library::library, \
                                                                  #name);                                \
    void* const real_fn = reinterpret_cast<void*>(next.Get(__builtin_return_address(0)));                \
    if (real_fn == nullptr) return ::ncclwatch::preload::missing;                                         \
    return ::ncclwatch::preload::name##_via NCCLWATCH_CUDA_ARGS_WITH_REAL args;                           \
  }
NCCLWATCH_CUDA_API(NCCLWATCH_DEFINE_CUDA_EXPORT)
#undef NCCLWATCH_DEFINE_CUDA_EXPORT

// The rows whose names cuda.h declares only under __CUDA_API_VERSION_INTERNAL or for
// per-thread default streams: their ABI against the driver's own typedefs (cudaTypedefs.h).
static_assert(std::is_same_v<decltype(&cuGetProcAddress), PFN_cuGetProcAddress_v11030>);
static_assert(std::is_same_v<decltype(&cuGetProcAddress_v2), PFN_cuGetProcAddress_v12000>);
static_assert(std::is_same_v<decltype(&cuStreamSynchronize_ptsz), PFN_cuStreamSynchronize_v7000_ptsz>);
static_assert(std::is_same_v<decltype(&cuCtxSynchronize), PFN_cuCtxSynchronize_v2000>);
static_assert(std::is_same_v<decltype(&cuCtxSynchronize_v2), PFN_cuCtxSynchronize_v13000>);
static_assert(std::is_same_v<decltype(&cuEventSynchronize), PFN_cuEventSynchronize_v2000>);
