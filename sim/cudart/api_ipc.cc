// CUDA IPC. A handle is an opaque token naming the exporting process, the allocation (or event)
// and its size. The sim cannot share memory or events between processes, so opening a handle
// never succeeds: from the exporting process itself it fails as real CUDA does
// (cudaErrorDeviceUninitialized, "invalid device context"), from another process with
// cudaErrorNotSupported and one stderr line.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "allocations.h"
#include "api_common.h"
#include "event.h"

namespace ncclsim {
namespace {

constexpr uint32_t kMemoryMagic = 0x4d434e53;  // "SNCM"
constexpr uint32_t kEventMagic = 0x45434e53;   // "SNCE"

struct Token {
  uint32_t magic;
  int32_t pid;
  int32_t device;
  uint32_t flags;
  uint64_t address;
  uint64_t size;
};
static_assert(sizeof(Token) <= sizeof(cudaIpcMemHandle_t) && sizeof(Token) <= sizeof(cudaIpcEventHandle_t));

template <typename Handle>
void Encode(const Token& token, Handle* handle) {
  std::memset(handle, 0, sizeof(*handle));
  std::memcpy(handle->reserved, &token, sizeof(token));
}

template <typename Handle>
Token Decode(const Handle& handle) {
  Token token;
  std::memcpy(&token, handle.reserved, sizeof(token));
  return token;
}

// What opening a valid token can give in the sim: never a mapping.
cudaError_t OpenToken(const Token& token, const char* call) {
  if (token.pid == static_cast<int32_t>(getpid())) return cudaErrorDeviceUninitialized;
  return Unsupported(call, "the sim cannot share memory or events with another process");
}

cudaError_t GetMemHandle(cudaIpcMemHandle_t* handle, void* ptr) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (handle == nullptr || ptr == nullptr) return cudaErrorInvalidValue;
  const Allocation a = Find(ptr);
  if (a.type != cudaMemoryTypeDevice || a.origin != AllocationOrigin::kDirect) return cudaErrorInvalidValue;
  Encode(Token{kMemoryMagic, static_cast<int32_t>(getpid()), a.device, 0, reinterpret_cast<uintptr_t>(a.base),
               a.size},
         handle);
  return cudaSuccess;
}

cudaError_t OpenMemHandle(void** ptr, cudaIpcMemHandle_t handle, unsigned flags) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (ptr == nullptr || (flags & ~cudaIpcMemLazyEnablePeerAccess) != 0) return cudaErrorInvalidValue;
  const Token token = Decode(handle);
  if (token.magic != kMemoryMagic) return cudaErrorInvalidValue;
  return OpenToken(token, "cudaIpcOpenMemHandle");
}

cudaError_t GetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (handle == nullptr) return cudaErrorInvalidValue;
  Event* e = Event::Lookup(event);
  if (e == nullptr || (e->flags() & cudaEventInterprocess) == 0) return cudaErrorInvalidResourceHandle;
  Encode(Token{kEventMagic, static_cast<int32_t>(getpid()), Runtime::current_device(), e->flags(),
               reinterpret_cast<uintptr_t>(event), 0},
         handle);
  return cudaSuccess;
}

cudaError_t OpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (event == nullptr) return cudaErrorInvalidValue;
  const Token token = Decode(handle);
  if (token.magic != kEventMagic) return cudaErrorInvalidValue;
  return OpenToken(token, "cudaIpcOpenEventHandle");
}

}  // namespace
}  // namespace ncclsim

using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* ptr) {
  return Report(ncclsim::GetMemHandle(handle, ptr));
}
NCCLSIM_EXPORT cudaError_t cudaIpcOpenMemHandle(void** ptr, cudaIpcMemHandle_t handle, unsigned int flags) {
  return Report(ncclsim::OpenMemHandle(ptr, handle, flags));
}
// No handle is ever opened, so there is nothing to close.
NCCLSIM_EXPORT cudaError_t cudaIpcCloseMemHandle(void*) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  return Report(cudaErrorInvalidValue);
}
NCCLSIM_EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event) {
  return Report(ncclsim::GetEventHandle(handle, event));
}
NCCLSIM_EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle) {
  return Report(ncclsim::OpenEventHandle(event, handle));
}
