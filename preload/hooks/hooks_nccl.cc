// The NCCL hooks, generated from nccl_api_table.h: for each row, the exported global
// symbol (library slot 0) and, for dlsym (dlsym_hook.cc), one trampoline per library slot.
#include <nccl.h>

#include "preload/hooks/hook_macros.h"
#include "preload/hooks/hot_path.h"
#include "preload/hooks/nccl_hook.h"
#include "preload/hooks/nccl_hooks.h"

namespace ncclwatch::preload {
namespace {

#define NCCLWATCH_DEFINE_TRAMPOLINE(kind, name, params, args, track) \
  template <int kSlot>                                               \
  ncclResult_t name##_at params {                                    \
    NCCLWATCH_NCCL_HOOK_BODY(name, params, args, track, kSlot);      \
  }
NCCLWATCH_NCCL_API(NCCLWATCH_DEFINE_TRAMPOLINE)
#undef NCCLWATCH_DEFINE_TRAMPOLINE

}  // namespace

void* NcclHookForLibrary(int api, int slot) noexcept {
  static_assert(kMaxNcclLibraries == 4);
  if (slot <= 0 || slot >= kMaxNcclLibraries) return nullptr;
  switch (static_cast<NcclApi>(api)) {
#define NCCLWATCH_TRAMPOLINE_CASE(kind, name, params, args, track)                                 \
  case NcclApi::name: {                                                                           \
    using Fn = ncclResult_t params;                                                               \
    static constexpr Fn* kBySlot[] = {&name##_at<0>, &name##_at<1>, &name##_at<2>, &name##_at<3>}; \
    return reinterpret_cast<void*>(kBySlot[slot]);                                                \
  }
    NCCLWATCH_NCCL_API(NCCLWATCH_TRAMPOLINE_CASE)
#undef NCCLWATCH_TRAMPOLINE_CASE
    case NcclApi::kCount:
      break;
  }
  return nullptr;
}

}  // namespace ncclwatch::preload

// The hooks a training step calls (collectives, P2P, groups) join the hot path's block
// (hot_path.h); the rest (init, teardown, queries) stay where they are.
#define NCCLWATCH_KIND_ATTRIBUTES_collective NCCLWATCH_HOT
#define NCCLWATCH_KIND_ATTRIBUTES_p2p NCCLWATCH_HOT
#define NCCLWATCH_KIND_ATTRIBUTES_group NCCLWATCH_HOT
#define NCCLWATCH_KIND_ATTRIBUTES_one_sided
#define NCCLWATCH_KIND_ATTRIBUTES_init
#define NCCLWATCH_KIND_ATTRIBUTES_lifecycle
#define NCCLWATCH_KIND_ATTRIBUTES_query
#define NCCLWATCH_DEFINE_EXPORT(kind, name, params, args, track)           \
  NCCLWATCH_EXPORT NCCLWATCH_KIND_ATTRIBUTES_##kind ncclResult_t name params { \
    NCCLWATCH_NCCL_HOOK_BODY(name, params, args, track, 0);                \
  }
NCCLWATCH_NCCL_API(NCCLWATCH_DEFINE_EXPORT)
#undef NCCLWATCH_DEFINE_EXPORT
