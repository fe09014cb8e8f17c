// What each kind of hooked CUDA call does around the real call (the table is
// cuda_api_table.h, the guard cuda_hook.h). One shape for all: `Begin()` before the call
// (false: nothing to do after it), `End(result)` after it, with errno kept around `End`.
// None of them changes an argument, the result, the CUDA last error or the current device.
#ifndef NCCLWATCH_PRELOAD_HOOKS_CUDA_TRACKING_H_
#define NCCLWATCH_PRELOAD_HOOKS_CUDA_TRACKING_H_

#include <cstdint>

#include "core/shm/sync_slot.h"
#include "preload/hooks/cuda_hooks.h"
#include "preload/observe/capture_watch.h"
#include "preload/observe/graph_observer.h"
#include "preload/observe/sync_observer.h"

namespace ncclwatch::preload::cuda_tracking {

// A host sync: the calling thread is published as blocked on `target` while the call runs.
struct Sync {
  shm::SyncKind kind;
  shm::SyncApi api;
  const void* target;
  shm::SyncSlot* slot = nullptr;

  bool Begin() noexcept {
    slot = BeginSync(kind, api, reinterpret_cast<uint64_t>(target));
    return slot != nullptr;
  }
  template <typename Result>
  void End(Result) noexcept {
    EndSync(slot);
  }
};

// A call that may begin a capture on the stream `key` (CaptureKey): ops on it ask CUDA from
// before the call, and keep asking if it succeeded (`ok`: the API's success code).
template <typename Result>
struct CaptureBegin {
  uint64_t key;
  Result ok;

  bool Begin() noexcept {
    CaptureBeginning(key);
    return true;
  }
  void End(Result result) noexcept { CaptureBegun(key, result == ok); }
};

// A call that ends the capture on `key`: over when it succeeded or reported the capture
// invalidated (cudaErrorStreamCaptureInvalidated and CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
// both 901).
template <typename Result>
struct CaptureEnd {
  uint64_t key;
  Result ok;
  Result invalidated;

  bool Begin() noexcept { return true; }
  void End(Result result) noexcept {
    if (result == ok || result == invalidated) CaptureEnded(key);
  }
};

// An entry-point lookup (cuGetProcAddress, cudaGetDriverEntryPoint*) of the base name
// `symbol`: when it succeeded with a function we hook, `*function` becomes our hook of that
// very function (cuda_hooks.h); anything else, and the result, stay as the driver answered.
// In pass-through mode (NCCLWATCH_DISABLE=1) too, as dlsym does: the hook then only forwards,
// and every way of finding a function still finds the same pointer.
template <typename Result>
struct EntryPointLookup {
  const char* symbol;
  void** function;
  Result ok;

  bool Begin() noexcept { return true; }
  void End(Result result) noexcept {
    if (result == ok && function != nullptr && *function != nullptr) {
      *function = CudaHookForEntryPoint(symbol, *function);
    }
  }
};

// ---- CUDA graphs (the graph rows of cuda_api_table.h, graph_observer.h).

// A launch of an executable graph on `stream` (as the caller gave it; `per_thread_default`
// for the _ptsz entry points, where 0 is the per-thread default stream). `ok`: the API's
// success code.
template <typename Result>
struct GraphLaunch {
  const void* exec;
  const void* stream;
  bool per_thread_default;
  Result ok;
  GraphLaunchCall call;

  bool Begin() noexcept {
    auto handle = reinterpret_cast<uint64_t>(stream);
    if (handle == 0 && per_thread_default) handle = reinterpret_cast<uint64_t>(cudaStreamPerThread);
    return BeginGraphLaunch(reinterpret_cast<uint64_t>(exec), handle, &call);
  }
  void End(Result result) noexcept { EndGraphLaunch(&call, result == ok); }
};

// An instantiation into `*exec_out` from `graph` (or cudaGraphExecUpdate of `*exec_out`).
template <typename Result, typename Exec>
struct GraphInstantiate {
  Exec* exec_out;
  const void* graph;
  Result ok;

  bool Begin() noexcept { return exec_out != nullptr; }
  void End(Result result) noexcept {
    if (result == ok) ObserveGraphInstantiated(reinterpret_cast<uint64_t>(*exec_out), reinterpret_cast<uint64_t>(graph));
  }
};

// The destruction of a graph (`exec` false) or of an executable graph.
template <typename Result>
struct GraphDestroy {
  const void* handle;
  bool exec;
  Result ok;

  bool Begin() noexcept { return true; }
  void End(Result result) noexcept {
    if (result != ok) return;
    if (exec) {
      ObserveGraphExecDestroyed(reinterpret_cast<uint64_t>(handle));
    } else {
      ObserveGraphDestroyed(reinterpret_cast<uint64_t>(handle));
    }
  }
};

}  // namespace ncclwatch::preload::cuda_tracking

#endif  // NCCLWATCH_PRELOAD_HOOKS_CUDA_TRACKING_H_
