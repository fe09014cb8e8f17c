// A CUDA event: marks a point in a stream; complete once the stream has run past it.
#ifndef NCCLWATCH_SIM_CUDART_EVENT_H_
#define NCCLWATCH_SIM_CUDART_EVENT_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "stream.h"

namespace ncclsim {

struct CaptureSequence;

class Event {
 public:
  explicit Event(unsigned flags) : flags_(flags) {}

  unsigned flags() const { return flags_; }
  bool timing() const { return (flags_ & cudaEventDisableTiming) == 0; }

  // Replaces the recorded point; `time_ns` is filled in (by the stream) when it is reached.
  // The event is then no longer one recorded in a capture.
  void SetRecord(StreamPoint point, std::shared_ptr<std::atomic<int64_t>> time_ns);
  // Recorded on a capturing stream: marks the `nodes` of `sequence` (capture.h).
  void SetCaptured(std::shared_ptr<CaptureSequence> sequence, std::vector<cudaGraphNode_t> nodes);
  // The capture the event was last recorded in, if it is still in progress, and its nodes.
  std::shared_ptr<CaptureSequence> Captured(std::vector<cudaGraphNode_t>* nodes);
  // cudaSuccess when never recorded or reached, cudaErrorNotReady otherwise.
  cudaError_t Query();
  void Synchronize();
  // Nanosecond timestamp of the reached record, or -1 while pending / never recorded.
  int64_t TimeNs();
  StreamPoint point();

  // Handle registry, so that stale or foreign handles are rejected.
  static cudaEvent_t Register(std::unique_ptr<Event> event);
  static Event* Lookup(cudaEvent_t handle);
  static bool Destroy(cudaEvent_t handle);

 private:
  const unsigned flags_;
  std::mutex mu_;
  StreamPoint point_;
  std::shared_ptr<std::atomic<int64_t>> time_ns_;
  std::shared_ptr<CaptureSequence> captured_in_;
  std::vector<cudaGraphNode_t> captured_nodes_;
};

int64_t MonotonicNs();

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_EVENT_H_
