// Streams and events: the sim runtime's own (CUstream is cudaStream_t, CUevent is cudaEvent_t),
// reached through the bridge, so a driver call never touches the runtime's last error.
#include <cstdlib>
#include <cstring>

#include "context.h"
#include "driver_api.h"
#include "runtime_link.h"

namespace ncclsim::driver {
namespace {

// NCCLSIM_NOOP_EVENTS=1: cuEventRecord and cuEventQuery return success at once (still counted
// as CUDA calls), so that a benchmark over the sim's no-op NCCL times a watcher's hook with a
// nearly free event record instead of the sim runtime's (several hundred ns under its mutexes).
bool NoopEvents() {
  static const bool noop = [] {
    const char* v = std::getenv("NCCLSIM_NOOP_EVENTS");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return noop;
}

// CU_STREAM_DEFAULT / CU_STREAM_NON_BLOCKING have the runtime's values (0 and 1).
static_assert(CU_STREAM_NON_BLOCKING == 0x1, "same as cudaStreamNonBlocking");
// CU_EVENT_* flags have the runtime's values: 1 blocking sync, 2 disable timing, 4 interprocess.
static_assert(CU_EVENT_BLOCKING_SYNC == 0x1 && CU_EVENT_DISABLE_TIMING == 0x2 && CU_EVENT_INTERPROCESS == 0x4);

CUresult CreateStream(CUstream* stream, unsigned flags, int priority) {
  if (stream == nullptr || (flags & ~unsigned{CU_STREAM_NON_BLOCKING}) != 0) return CUDA_ERROR_INVALID_VALUE;
  return rt::StreamCreate(stream, flags, priority);
}

CUresult StreamContext(CUstream stream, CUcontext* context) {
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int device = 0;
  if (CUresult r = rt::StreamDevice(stream, &device); r != CUDA_SUCCESS) return r;
  *context = PrimaryContext(device);
  return CUDA_SUCCESS;
}

CUresult StreamContextV2(CUstream stream, CUcontext* context, CUgreenCtx* green) {
  if (green == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *green = nullptr;  // the sim has no green contexts
  return StreamContext(stream, context);
}

CUresult WaitEvent(CUstream stream, CUevent event, unsigned flags) {
  if (flags != CU_EVENT_WAIT_DEFAULT && flags != CU_EVENT_WAIT_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
  return rt::StreamWaitEvent(stream, event, flags);
}

CUresult CreateEvent(CUevent* event, unsigned flags) {
  constexpr unsigned kKnown = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (event == nullptr || (flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  // An interprocess event must disable timing, as in CUDA.
  if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
  return rt::EventCreate(event, flags);
}

CUresult RecordWithFlags(CUevent event, CUstream stream, unsigned flags) {
  if (flags != CU_EVENT_RECORD_DEFAULT && flags != CU_EVENT_RECORD_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
  return rt::EventRecord(event, stream, flags);
}

CUresult ElapsedTime(float* ms, CUevent start, CUevent end) {
  if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return rt::EventElapsedTime(ms, start, end);
}

}  // namespace
}  // namespace ncclsim::driver

namespace drv = ncclsim::driver;
using drv::PerThread;

NCCLSIM_DRIVER_EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  return drv::CreateStream(stream, flags, 0);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int priority) {
  return drv::CreateStream(stream, flags, priority);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamDestroy_v2(CUstream stream) { return drv::rt::StreamDestroy(stream); }
NCCLSIM_DRIVER_EXPORT CUresult cuStreamDestroy(CUstream stream) { return drv::rt::StreamDestroy(stream); }
NCCLSIM_DRIVER_EXPORT CUresult cuStreamQuery(CUstream stream) { return drv::rt::StreamQuery(stream); }
NCCLSIM_DRIVER_EXPORT CUresult cuStreamQuery_ptsz(CUstream stream) { return drv::rt::StreamQuery(PerThread(stream)); }
NCCLSIM_DRIVER_EXPORT CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  return drv::rt::StreamIsCapturing(stream, status);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream stream, CUstreamCaptureStatus* status) {
  return drv::rt::StreamIsCapturing(PerThread(stream), status);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamSynchronize(CUstream stream) { return drv::rt::StreamSynchronize(stream); }
NCCLSIM_DRIVER_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream stream) {
  return drv::rt::StreamSynchronize(PerThread(stream));
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  return drv::WaitEvent(stream, event, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream stream, CUevent event, unsigned int flags) {
  return drv::WaitEvent(PerThread(stream), event, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* data) {
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return drv::rt::LaunchHostFunc(stream, fn, data);
}
NCCLSIM_DRIVER_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream stream, CUhostFn fn, void* data) {
  return cuLaunchHostFunc(PerThread(stream), fn, data);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetCtx(CUstream stream, CUcontext* context) {
  return drv::StreamContext(stream, context);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream stream, CUcontext* context) {
  return drv::StreamContext(PerThread(stream), context);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetCtx_v2(CUstream stream, CUcontext* context, CUgreenCtx* green) {
  return drv::StreamContextV2(stream, context, green);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetCtx_v2_ptsz(CUstream stream, CUcontext* context, CUgreenCtx* green) {
  return drv::StreamContextV2(PerThread(stream), context, green);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetFlags(CUstream stream, unsigned int* flags) {
  if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return drv::rt::StreamFlags(stream, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream stream, unsigned int* flags) {
  return cuStreamGetFlags(PerThread(stream), flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetPriority(CUstream stream, int* priority) {
  if (priority == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return drv::rt::StreamPriority(stream, priority);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream stream, int* priority) {
  return cuStreamGetPriority(PerThread(stream), priority);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetDevice(CUstream stream, CUdevice* device) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return drv::rt::StreamDevice(stream, device);
}
NCCLSIM_DRIVER_EXPORT CUresult cuStreamGetDevice_ptsz(CUstream stream, CUdevice* device) {
  return cuStreamGetDevice(PerThread(stream), device);
}
NCCLSIM_DRIVER_EXPORT CUresult cuCtxGetStreamPriorityRange(int* least, int* greatest) {
  if (least != nullptr) *least = 0;  // the runtime's range: 0 (lowest) .. -5 (highest), as on an H100
  if (greatest != nullptr) *greatest = -5;
  return CUDA_SUCCESS;
}

NCCLSIM_DRIVER_EXPORT CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  return drv::CreateEvent(event, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuEventDestroy_v2(CUevent event) { return drv::rt::EventDestroy(event); }
NCCLSIM_DRIVER_EXPORT CUresult cuEventDestroy(CUevent event) { return drv::rt::EventDestroy(event); }
NCCLSIM_DRIVER_EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  if (drv::NoopEvents()) {
    drv::rt::CountCall();
    return event != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  }
  return drv::rt::EventRecord(event, stream, CU_EVENT_RECORD_DEFAULT);
}
NCCLSIM_DRIVER_EXPORT CUresult cuEventRecord_ptsz(CUevent event, CUstream stream) {
  return drv::rt::EventRecord(event, PerThread(stream), CU_EVENT_RECORD_DEFAULT);
}
NCCLSIM_DRIVER_EXPORT CUresult cuEventRecordWithFlags(CUevent event, CUstream stream, unsigned int flags) {
  return drv::RecordWithFlags(event, stream, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent event, CUstream stream, unsigned int flags) {
  return drv::RecordWithFlags(event, PerThread(stream), flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuEventQuery(CUevent event) {
  if (drv::NoopEvents()) {
    drv::rt::CountCall();
    return event != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  }
  return drv::rt::EventQuery(event);
}
NCCLSIM_DRIVER_EXPORT CUresult cuEventSynchronize(CUevent event) { return drv::rt::EventSynchronize(event); }
NCCLSIM_DRIVER_EXPORT CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  return drv::ElapsedTime(ms, start, end);
}
NCCLSIM_DRIVER_EXPORT CUresult cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
  return drv::ElapsedTime(ms, start, end);
}
