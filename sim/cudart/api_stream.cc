// Stream entry points: creation, queries, synchronisation, host functions and kernel launches.
#include <cuda_runtime_api.h>

#include "api_common.h"
#include "capture.h"

namespace ncclsim {
namespace {

constexpr int kGreatestPriority = -5;  // the range real devices report

cudaError_t Create(cudaStream_t* out, unsigned flags, int priority) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (out == nullptr || (flags & ~cudaStreamNonBlocking) != 0) return cudaErrorInvalidValue;
  if (priority > 0) priority = 0;
  if (priority < kGreatestPriority) priority = kGreatestPriority;
  auto stream = Runtime::Get().CreateStream(flags, priority);
  if (!stream) return cudaErrorInvalidDevice;
  *out = reinterpret_cast<cudaStream_t>(stream.get());
  return cudaSuccess;
}

cudaError_t Query(cudaStream_t handle, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (cudaError_t e = CheckSynchronize(*s); e != cudaSuccess) return e;
  return s->IsComplete(s->last_ticket()) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t Synchronize(cudaStream_t handle, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (cudaError_t e = CheckSynchronize(*s); e != cudaSuccess) return e;
  // Synchronising the legacy stream also covers the blocking streams its next item would wait for.
  WaitForAll(Runtime::Get().LegacyOrdering(*s));
  s->WaitFor(s->last_ticket());
  return cudaSuccess;
}

cudaError_t LaunchHostFunc(cudaStream_t handle, cudaHostFn_t fn, void* user_data, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (fn == nullptr) return cudaErrorInvalidValue;
  return Runtime::Get().Submit(s, HostAction(fn, user_data), /*trivial=*/false);
}

cudaError_t AddCallback(cudaStream_t handle, cudaStreamCallback_t cb, void* user_data, unsigned flags,
                        DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (cb == nullptr || flags != 0) return cudaErrorInvalidValue;
  return Runtime::Get().Submit(
      s, MakeAction(cudaGraphNodeTypeHost, [cb, handle, user_data] { cb(handle, cudaSuccess, user_data); }),
      /*trivial=*/false);
}

cudaError_t GetFlags(cudaStream_t handle, unsigned* flags, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (flags == nullptr) return cudaErrorInvalidValue;
  *flags = s->flags();
  return cudaSuccess;
}

cudaError_t GetPriority(cudaStream_t handle, int* priority, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (priority == nullptr) return cudaErrorInvalidValue;
  *priority = s->priority();
  return cudaSuccess;
}

cudaError_t GetDevice(cudaStream_t handle, int* device, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (device == nullptr) return cudaErrorInvalidValue;
  *device = s->device();
  return cudaSuccess;
}

cudaError_t GetId(cudaStream_t handle, unsigned long long* id, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  if (id == nullptr) return cudaErrorInvalidValue;
  *id = s->id();
  return cudaSuccess;
}

}  // namespace

// A kernel does nothing here, but it still occupies its place in the stream's order.
cudaError_t LaunchNoOpKernel(cudaStream_t handle, DefaultStream ds) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, ds, &s); e != cudaSuccess) return e;
  return Runtime::Get().Submit(s, MakeAction(cudaGraphNodeTypeKernel), /*trivial=*/true);
}

cudaError_t CheckSynchronize(const Stream& stream) {
  if (cudaError_t e = Captures::Get().CheckStreamSync(stream); e != cudaSuccess) return e;
  if (cudaError_t e = Captures::Get().CheckUnsafeCall(); e != cudaSuccess) return e;
  if (stream.kind() != StreamKind::kLegacy) return cudaSuccess;
  return Captures::Get().CheckLegacyUse(stream.device(), /*invalidate=*/true);
}

}  // namespace ncclsim

using ncclsim::DefaultStream;
using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t* s) {
  return Report(ncclsim::Create(s, cudaStreamDefault, 0));
}
NCCLSIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) {
  return Report(ncclsim::Create(s, flags, 0));
}
NCCLSIM_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int flags, int priority) {
  return Report(ncclsim::Create(s, flags, priority));
}
NCCLSIM_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  if (least) *least = 0;
  if (greatest) *greatest = ncclsim::kGreatestPriority;
  return cudaSuccess;
}
NCCLSIM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  return Report(ncclsim::Runtime::Get().DestroyStream(s) ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

NCCLSIM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t s) { return Report(ncclsim::Query(s, DefaultStream::kLegacy)); }
NCCLSIM_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t s) {
  return Report(ncclsim::Query(s, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  return Report(ncclsim::Synchronize(s, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s) {
  return Report(ncclsim::Synchronize(s, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* user_data) {
  return Report(ncclsim::LaunchHostFunc(s, fn, user_data, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t s, cudaHostFn_t fn, void* user_data) {
  return Report(ncclsim::LaunchHostFunc(s, fn, user_data, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* user_data,
                                                 unsigned int flags) {
  return Report(ncclsim::AddCallback(s, cb, user_data, flags, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t s, cudaStreamCallback_t cb, void* user_data,
                                                      unsigned int flags) {
  return Report(ncclsim::AddCallback(s, cb, user_data, flags, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned int* flags) {
  return Report(ncclsim::GetFlags(s, flags, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t s, unsigned int* flags) {
  return Report(ncclsim::GetFlags(s, flags, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t s, int* priority) {
  return Report(ncclsim::GetPriority(s, priority, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t s, int* priority) {
  return Report(ncclsim::GetPriority(s, priority, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetDevice(cudaStream_t s, int* device) {
  return Report(ncclsim::GetDevice(s, device, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t s, int* device) {
  return Report(ncclsim::GetDevice(s, device, DefaultStream::kPerThread));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long* id) {
  return Report(ncclsim::GetId(s, id, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaStreamGetId_ptsz(cudaStream_t s, unsigned long long* id) {
  return Report(ncclsim::GetId(s, id, DefaultStream::kPerThread));
}

NCCLSIM_EXPORT cudaError_t cudaLaunchKernel(const void* func, dim3, dim3, void**, size_t, cudaStream_t s) {
  if (func == nullptr) return Report(cudaErrorInvalidValue);
  return Report(ncclsim::LaunchNoOpKernel(s, DefaultStream::kLegacy));
}
NCCLSIM_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3, dim3, void**, size_t, cudaStream_t s) {
  if (func == nullptr) return Report(cudaErrorInvalidValue);
  return Report(ncclsim::LaunchNoOpKernel(s, DefaultStream::kPerThread));
}
