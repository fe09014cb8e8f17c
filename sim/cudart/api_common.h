// Helpers shared by the exported entry points (api_*.cc).
#ifndef NCCLWATCH_SIM_CUDART_API_COMMON_H_
#define NCCLWATCH_SIM_CUDART_API_COMMON_H_

#include <cuda_runtime_api.h>

#include <memory>

#include "error_state.h"
#include "event.h"
#include "export.h"
#include "runtime.h"

namespace ncclsim {

// cudaErrorInitializationError in a forked child, cudaSuccess otherwise.
inline cudaError_t CheckUsable() {
  return Runtime::Usable() ? cudaSuccess : cudaErrorInitializationError;
}

// cudaErrorNoDevice without devices, cudaErrorInvalidDevice outside 0..count-1.
inline cudaError_t CheckDevice(int device) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  const int count = Runtime::Get().device_count();
  if (count == 0) return cudaErrorNoDevice;
  return device >= 0 && device < count ? cudaSuccess : cudaErrorInvalidDevice;
}

// cudaErrorNotSupported, after one stderr line naming `call` (once per call name), for requests
// the sim cannot honour; `why` says what is missing.
cudaError_t Unsupported(const char* call, const char* why);

// Resolves `handle` or explains why not (fork, bad device, unknown handle).
inline cudaError_t ResolveStream(cudaStream_t handle, DefaultStream default_stream,
                                 std::shared_ptr<Stream>* out) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  *out = Runtime::Get().Resolve(handle, default_stream);
  return *out ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

// Enqueues a kernel that does nothing but keeps its place in the stream order (api_stream.cc).
cudaError_t LaunchNoOpKernel(cudaStream_t handle, DefaultStream default_stream);

// Whether the host may wait for or query `stream` under the capture rules (capture.h): not if
// it captures, nor under the calling thread's capture mode, nor (the legacy stream) while a
// blocking stream of its device captures (api_stream.cc).
cudaError_t CheckSynchronize(const Stream& stream);

// Records `event` where `stream` now ends (api_event.cc); graph replays use it too.
cudaError_t RecordNow(Event* event, const std::shared_ptr<Stream>& stream);
// Orders `stream`'s next work after `point` (nothing for a null point).
cudaError_t WaitNow(const std::shared_ptr<Stream>& stream, StreamPoint point);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_API_COMMON_H_
