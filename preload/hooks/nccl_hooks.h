// The generated NCCL hooks, as dlsym hands them out.
#ifndef NCCLWATCH_PRELOAD_HOOKS_NCCL_HOOKS_H_
#define NCCLWATCH_PRELOAD_HOOKS_NCCL_HOOKS_H_

namespace ncclwatch::preload {

// The hook of API index `api` (NcclApiIndex) that forwards to library `slot` (>= 1);
// nullptr for an invalid index or slot.
void* NcclHookForLibrary(int api, int slot) noexcept;

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_HOOKS_NCCL_HOOKS_H_
