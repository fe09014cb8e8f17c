// Stream capture, with CUDA's rules (cuda_runtime_api.h and the programming guide's "Stream
// Capture" section; the sim's choices where they are silent are in README.md):
//
// - A capture sequence begins on one stream (its origin) and records, instead of running, the
//   work enqueued on every stream that belongs to it. A stream joins it by waiting on an event
//   recorded in it; the sequence ends on its origin, and then every other stream must have been
//   joined back (cudaErrorStreamCaptureUnjoined otherwise).
// - Each stream of a sequence has a dependency set: the nodes its next captured work follows.
// - An operation that breaks the rules invalidates the sequence: later work on its streams
//   fails with cudaErrorStreamCaptureInvalidated, and its end returns that error and no graph.
// - The legacy stream cannot capture; using it while a blocking stream of its device captures
//   gives cudaErrorStreamCaptureImplicit.
// - "Potentially unsafe" calls (allocation, synchronous copies, synchronisation and queries;
//   the list is in README.md) fail with cudaErrorStreamCaptureUnsupported, invalidating the
//   captures that forbid them, when the calling thread's mode forbids them:
//   global mode while this thread has a non-relaxed capture or another thread a global one,
//   thread-local mode while this thread has a non-relaxed capture, relaxed mode never.
#ifndef NCCLWATCH_SIM_CUDART_CAPTURE_H_
#define NCCLWATCH_SIM_CUDART_CAPTURE_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "graph.h"
#include "stream.h"

namespace ncclsim {

class Event;

struct CaptureSequence {
  unsigned long long id = 0;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id owner;  // the thread that began it
  const Stream* origin = nullptr;
  cudaGraph_t graph = nullptr;
  bool callers_graph = false;  // cudaStreamBeginCaptureToGraph: the graph stays the caller's
  bool invalidated = false;
  bool ended = false;
};

// What cudaStreamGetCaptureInfo reports. The arrays stay valid until the next call that
// operates on the stream.
struct CaptureInfo {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* dependencies = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  size_t count = 0;
};

class Captures {
 public:
  static Captures& Get();
  // Whether any capture sequence is in progress in the process: lets every check below return
  // at once, with one atomic load, in programs that never capture.
  bool Any() const { return live_.load(std::memory_order_acquire) != 0; }

  // cudaStreamBeginCapture(ToGraph): `target` null makes a new graph.
  cudaError_t Begin(const std::shared_ptr<Stream>& stream, cudaStreamCaptureMode mode, cudaGraph_t target,
                    const cudaGraphNode_t* dependencies, size_t count);
  cudaError_t End(const Stream& stream, cudaGraph_t* graph);
  // cudaErrorStreamCaptureImplicit on a legacy stream made unusable by a capture.
  cudaError_t Query(const Stream& stream, CaptureInfo* info);
  cudaError_t UpdateDependencies(const Stream& stream, const cudaGraphNode_t* dependencies, size_t count,
                                 unsigned flags);

  // Work for `stream`: false when the stream is not capturing (run the work). True when it
  // captures: then *result is cudaSuccess with `action` recorded as a node, or why not.
  bool Record(const Stream& stream, const NodeAction& action, cudaError_t* result);
  // Every capturing stream refuses `call` (say, launching a graph into a capture) with
  // cudaErrorStreamCaptureUnsupported and is invalidated. False when not capturing.
  bool Refuse(const Stream& stream, cudaError_t* result);
  // cudaEventRecord on a capturing stream (false otherwise): the event then marks the stream's
  // dependency set; with cudaEventRecordExternal it becomes an event record node instead.
  bool RecordEvent(const Stream& stream, Event* event, unsigned flags, cudaError_t* result);
  // cudaStreamWaitEvent when the stream captures or the event was recorded in a capture (false
  // otherwise): joins, merges or refuses as CUDA does.
  bool WaitEvent(const std::shared_ptr<Stream>& stream, Event* event, unsigned flags, cudaError_t* result);

  // The legacy stream of `device` may not be used while a blocking stream of it captures:
  // cudaErrorStreamCaptureImplicit, invalidating those captures when `invalidate`.
  cudaError_t CheckLegacyUse(int device, bool invalidate);
  // The thread-mode rule for potentially unsafe calls (see above).
  cudaError_t CheckUnsafeCall();
  // Synchronising or querying a capturing stream: cudaErrorStreamCaptureUnsupported,
  // invalidating its capture. cudaSuccess when it is not capturing.
  cudaError_t CheckStreamSync(const Stream& stream);
  // Synchronising a device with capturing streams: cudaErrorStreamCaptureUnsupported,
  // invalidating those captures.
  cudaError_t CheckDeviceSync(int device);
  // Querying or synchronising an event recorded in a capture in progress:
  // cudaErrorCapturedEvent, invalidating it.
  cudaError_t CheckEventUse(Event* event);
  // A destroyed stream leaves its capture, which is invalidated.
  void Forget(const Stream* stream);
  // Whether a capture in progress records into `graph` (it may not be destroyed then).
  bool CapturesInto(cudaGraph_t graph);

  static cudaStreamCaptureMode ExchangeThreadMode(cudaStreamCaptureMode mode);

 private:
  struct StreamState {
    std::shared_ptr<Stream> stream;
    std::shared_ptr<CaptureSequence> sequence;
    std::vector<cudaGraphNode_t> dependencies;
    std::vector<cudaGraphEdgeData> edges;  // all default edges, for cudaStreamGetCaptureInfo
  };
  Captures() = default;
  StreamState* FindLocked(const Stream& stream);
  cudaError_t RecordLocked(StreamState* state, const NodeAction& action);
  void JoinLocked(const std::shared_ptr<Stream>& stream, const std::shared_ptr<CaptureSequence>& sequence,
                  std::vector<cudaGraphNode_t> dependencies);
  void InvalidateLocked(CaptureSequence* sequence);
  // Ends `sequence`: its streams leave capture mode.
  void CloseLocked(const std::shared_ptr<CaptureSequence>& sequence);

  std::mutex mu_;
  std::atomic<int> live_{0};
  unsigned long long next_id_ = 1;
  std::vector<std::shared_ptr<CaptureSequence>> sequences_;
  std::unordered_map<const Stream*, StreamState> streams_;
};

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_CAPTURE_H_
