// Event entry points.
#include <cuda_runtime_api.h>

#include <memory>

#include "api_common.h"
#include "call_count.h"
#include "capture.h"
#include "event.h"

namespace ncclsim {
namespace {

constexpr unsigned kKnownEventFlags = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;

cudaError_t Create(cudaEvent_t* out, unsigned flags) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (out == nullptr || (flags & ~kKnownEventFlags) != 0) return cudaErrorInvalidValue;
  // Interprocess events must disable timing, as in CUDA.
  if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)) return cudaErrorInvalidValue;
  *out = Event::Register(std::make_unique<Event>(flags));
  return cudaSuccess;
}

cudaError_t Lookup(cudaEvent_t handle, Event** event) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  *event = Event::Lookup(handle);
  return *event ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t Record(cudaEvent_t handle, cudaStream_t stream_handle, unsigned flags, DefaultStream ds) {
  Event* event;
  if (cudaError_t e = Lookup(handle, &event); e != cudaSuccess) return e;
  std::shared_ptr<Stream> stream;
  if (cudaError_t e = ResolveStream(stream_handle, ds, &stream); e != cudaSuccess) return e;
  if ((flags & ~cudaEventRecordExternal) != 0) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaSuccess; Captures::Get().RecordEvent(*stream, event, flags, &e)) return e;
  return RecordNow(event, stream);
}

cudaError_t Elapsed(float* ms, cudaEvent_t start, cudaEvent_t end) {
  Event* a;
  Event* b;
  if (cudaError_t e = Lookup(start, &a); e != cudaSuccess) return e;
  if (cudaError_t e = Lookup(end, &b); e != cudaSuccess) return e;
  if (ms == nullptr) return cudaErrorInvalidValue;
  if (cudaError_t e = Captures::Get().CheckEventUse(a); e != cudaSuccess) return e;
  if (cudaError_t e = Captures::Get().CheckEventUse(b); e != cudaSuccess) return e;
  if (!a->timing() || !b->timing()) return cudaErrorInvalidResourceHandle;
  if (a->Query() != cudaSuccess || b->Query() != cudaSuccess) return cudaErrorNotReady;
  const int64_t t0 = a->TimeNs();
  const int64_t t1 = b->TimeNs();
  if (t0 < 0 || t1 < 0) return cudaErrorInvalidResourceHandle;  // never recorded
  *ms = static_cast<float>(t1 - t0) / 1e6f;
  return cudaSuccess;
}

cudaError_t WaitEvent(cudaStream_t stream_handle, cudaEvent_t handle, unsigned flags, DefaultStream ds) {
  Event* event;
  if (cudaError_t e = Lookup(handle, &event); e != cudaSuccess) return e;
  std::shared_ptr<Stream> stream;
  if (cudaError_t e = ResolveStream(stream_handle, ds, &stream); e != cudaSuccess) return e;
  if ((flags & ~cudaEventWaitExternal) != 0) return cudaErrorInvalidValue;
  if (cudaError_t e = cudaSuccess; Captures::Get().WaitEvent(stream, event, flags, &e)) return e;
  return WaitNow(stream, event->point());
}

// Host-side waits on an event: refused for one recorded in a capture and under the calling
// thread's capture mode.
cudaError_t CheckWaitable(Event* event) {
  if (cudaError_t e = Captures::Get().CheckEventUse(event); e != cudaSuccess) return e;
  return Captures::Get().CheckUnsafeCall();
}

}  // namespace

cudaError_t RecordNow(Event* event, const std::shared_ptr<Stream>& stream) {
  auto time_ns = std::make_shared<std::atomic<int64_t>>(-1);
  uint64_t ticket = 0;
  cudaError_t e = Runtime::Get().Submit(
      stream, MakeAction(cudaGraphNodeTypeEventRecord, [time_ns] { time_ns->store(MonotonicNs()); }), true, &ticket);
  if (e == cudaSuccess && ticket != 0) event->SetRecord(StreamPoint{stream, ticket}, time_ns);
  return e;
}

cudaError_t WaitNow(const std::shared_ptr<Stream>& stream, StreamPoint point) {
  if (!point.stream) return cudaSuccess;  // waiting on a never-recorded event is a no-op
  // A marker item that depends on the event; everything after it is ordered behind it.
  if (point.stream->IsComplete(point.ticket)) {
    return Runtime::Get().Submit(stream, MakeAction(cudaGraphNodeTypeWaitEvent), /*trivial=*/true);
  }
  return Runtime::Get().Submit(
      stream, MakeAction(cudaGraphNodeTypeWaitEvent, [point] { point.stream->WaitFor(point.ticket); }),
      /*trivial=*/false);
}

}  // namespace ncclsim

using ncclsim::DefaultStream;
using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t* event) { return Report(ncclsim::Create(event, 0)); }
NCCLSIM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  ncclsim::CountCall();
  return Report(ncclsim::Create(event, flags));
}
NCCLSIM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  return Report(ncclsim::Event::Destroy(event) ? cudaSuccess : cudaErrorInvalidResourceHandle);
}
NCCLSIM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t s) {
  ncclsim::CountCall();
  return Report(ncclsim::Record(event, s, 0, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t s) {
  ncclsim::CountCall();
  return Report(ncclsim::Record(event, s, 0, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t s, unsigned int flags) {
  return Report(ncclsim::Record(event, s, flags, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t s, unsigned int flags) {
  return Report(ncclsim::Record(event, s, flags, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaEventQuery(cudaEvent_t handle) {
  ncclsim::CountCall();
  ncclsim::Event* event;
  if (cudaError_t e = ncclsim::Lookup(handle, &event); e != cudaSuccess) return Report(e);
  if (cudaError_t e = ncclsim::CheckWaitable(event); e != cudaSuccess) return Report(e);
  return Report(event->Query());
}
NCCLSIM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t handle) {
  ncclsim::Event* event;
  if (cudaError_t e = ncclsim::Lookup(handle, &event); e != cudaSuccess) return Report(e);
  if (cudaError_t e = ncclsim::CheckWaitable(event); e != cudaSuccess) return Report(e);
  event->Synchronize();
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  return Report(ncclsim::Elapsed(ms, start, end));
}
NCCLSIM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t event, unsigned int flags) {
  return Report(ncclsim::WaitEvent(s, event, flags, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t event, unsigned int flags) {
  return Report(ncclsim::WaitEvent(s, event, flags, DefaultStream::kPerThread));
}
