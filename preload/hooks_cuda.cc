// Hooks for the CUDA host syncs where a rank waits for the GPU. Exported unversioned, so
// they interpose libcudart's versioned (@@libcudart.so.13) references too.
#include <cuda_runtime_api.h>

#include "preload/hook_macros.h"
#include "preload/hot_path.h"
#include "preload/keep_errno.h"
#include "preload/sync_observer.h"

extern "C" cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);

namespace {

using ncclwatch::shm::SyncKind;

constexpr auto kCudart = ncclwatch::preload::Library::kCudart;

template <typename Call>
cudaError_t ObserveSync(SyncKind kind, const void* target, Call&& call) {
  ncclwatch::shm::SyncSlot* slot = ncclwatch::preload::BeginSync(kind, reinterpret_cast<uint64_t>(target));
  if (slot == nullptr) return call();
  const cudaError_t result = call();
  {
    const ncclwatch::preload::KeepErrno keep;
    ncclwatch::preload::EndSync(slot);
  }
  return result;
}

}  // namespace

NCCLWATCH_EXPORT NCCLWATCH_HOT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  NCCLWATCH_NEXT(kCudart, cudaStreamSynchronize, cudaErrorSharedObjectSymbolNotFound);
  return ObserveSync(SyncKind::kStream, stream, [&] { return real(stream); });
}

NCCLWATCH_EXPORT NCCLWATCH_HOT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  NCCLWATCH_NEXT(kCudart, cudaStreamSynchronize_ptsz, cudaErrorSharedObjectSymbolNotFound);
  return ObserveSync(SyncKind::kStream, stream, [&] { return real(stream); });
}

NCCLWATCH_EXPORT NCCLWATCH_HOT cudaError_t cudaDeviceSynchronize(void) {
  NCCLWATCH_NEXT(kCudart, cudaDeviceSynchronize, cudaErrorSharedObjectSymbolNotFound);
  return ObserveSync(SyncKind::kDevice, nullptr, [&] { return real(); });
}

NCCLWATCH_EXPORT NCCLWATCH_HOT cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  NCCLWATCH_NEXT(kCudart, cudaEventSynchronize, cudaErrorSharedObjectSymbolNotFound);
  return ObserveSync(SyncKind::kEvent, event, [&] { return real(event); });
}
