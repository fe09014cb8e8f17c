// Copies beyond api_memory.cc: pitched and peer copies (real copies, in stream order) and the
// symbol entry points. nvcc's variable registration is a no-op in the sim, so no device symbol
// exists and every symbol lookup fails with cudaErrorInvalidSymbol.
#include <cuda_runtime_api.h>

#include <cstring>

#include "api_common.h"

namespace ncclsim {
namespace {

cudaError_t Copy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                        cudaStream_t handle) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, DefaultStream::kLegacy, &s); e != cudaSuccess) return e;
  if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
  if (width == 0 || height == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return cudaErrorInvalidValue;
  auto rows = [=] {
    for (size_t row = 0; row < height; ++row) {
      std::memmove(static_cast<char*>(dst) + row * dpitch, static_cast<const char*>(src) + row * spitch, width);
    }
  };
  return Runtime::Get().Submit(s, MakeAction(cudaGraphNodeTypeMemcpy, rows), /*trivial=*/true);
}

cudaError_t PeerCopyAsync(void* dst, int dst_device, const void* src, int src_device, size_t count,
                          cudaStream_t handle) {
  std::shared_ptr<Stream> s;
  if (cudaError_t e = ResolveStream(handle, DefaultStream::kLegacy, &s); e != cudaSuccess) return e;
  if (CheckDevice(dst_device) != cudaSuccess || CheckDevice(src_device) != cudaSuccess) {
    return cudaErrorInvalidDevice;
  }
  if (count == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return cudaErrorInvalidValue;
  return Runtime::Get().Submit(s, MakeAction(cudaGraphNodeTypeMemcpy, [=] { std::memmove(dst, src, count); }),
                               /*trivial=*/true);
}

}  // namespace
}  // namespace ncclsim

using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                             size_t height, cudaMemcpyKind, cudaStream_t s) {
  return Report(ncclsim::Copy2DAsync(dst, dpitch, src, spitch, width, height, s));
}
NCCLSIM_EXPORT cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                                               size_t count, cudaStream_t s) {
  return Report(ncclsim::PeerCopyAsync(dst, dst_device, src, src_device, count, s));
}
NCCLSIM_EXPORT cudaError_t cudaMemcpyToSymbol(const void*, const void*, size_t, size_t, cudaMemcpyKind) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  return Report(cudaErrorInvalidSymbol);
}
NCCLSIM_EXPORT cudaError_t cudaGetSymbolAddress(void**, const void*) {
  if (cudaError_t e = ncclsim::CheckUsable(); e != cudaSuccess) return Report(e);
  return Report(cudaErrorInvalidSymbol);
}
