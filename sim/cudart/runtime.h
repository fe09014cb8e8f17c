// Process-wide state of the simulated CUDA runtime: devices, streams and the per-thread current
// device. Captures are capture.h's. Created on first use and never destroyed, so workers blocked in
// host functions at exit cannot touch freed state.
#ifndef NCCLWATCH_SIM_CUDART_RUNTIME_H_
#define NCCLWATCH_SIM_CUDART_RUNTIME_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "graph.h"
#include "stream.h"

namespace ncclsim {

// How the handle 0 is read: the legacy default stream, or (for _ptsz/_ptds entry points) the
// calling thread's per-thread default stream.
enum class DefaultStream { kLegacy, kPerThread };

class Runtime {
 public:
  static Runtime& Get();
  // False in a child forked after the parent used the runtime: as with real CUDA, the
  // child must not use it (its workers do not exist there).
  static bool Usable();

  int device_count() const { return device_count_; }
  static int current_device();
  static void set_current_device(int device);

  // Resolves a stream handle for the current device; null if the handle is not a live stream.
  std::shared_ptr<Stream> Resolve(cudaStream_t handle, DefaultStream default_stream);
  std::shared_ptr<Stream> CreateStream(unsigned flags, int priority);
  bool DestroyStream(cudaStream_t handle);

  // What work enqueued next on `stream` must wait for under legacy default-stream rules.
  std::vector<StreamPoint> LegacyOrdering(const Stream& stream);
  // Enqueues `action`'s work on `stream` with legacy ordering, after `after` too, or records the
  // action as a node of the stream's capture. `ticket`, if given, receives the item's ticket (0
  // when captured).
  cudaError_t Submit(const std::shared_ptr<Stream>& stream, NodeAction action, bool trivial,
                     uint64_t* ticket = nullptr, std::vector<StreamPoint> after = {});
  // Waits for everything enqueued so far on every stream of `device`.
  void SynchronizeDevice(int device);

 private:
  struct Device {
    std::shared_ptr<Stream> legacy;
    std::vector<std::weak_ptr<Stream>> others;  // created and per-thread streams
  };
  Runtime();
  std::shared_ptr<Stream> LegacyLocked(int device);
  std::shared_ptr<Stream> PerThread(int device);
  void Register(const std::shared_ptr<Stream>& stream);

  const int device_count_;
  std::mutex mu_;
  std::vector<Device> devices_;
  std::unordered_map<const Stream*, std::shared_ptr<Stream>> created_;
  uint64_t next_stream_id_ = 1;
};

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_RUNTIME_H_
