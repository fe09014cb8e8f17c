// Device memory, copies and sets. Device memory is host memory (sim runtime allocations or VMM
// mappings), so every copy is a memmove and every pointer is valid on the host.
//
// Asynchronous copies and sets run as host functions in stream order. The synchronous ones are
// enqueued on the default stream the same way and then waited for, which gives them the runtime's
// legacy-stream ordering (they start after all prior work of the device's blocking streams).
#include <cstdint>
#include <cstring>
#include <functional>

#include "driver_api.h"
#include "runtime_link.h"

namespace ncclsim::driver {
namespace {

// A capture records the copy or set as a node of `type`, which every replay runs again.
CUresult Async(CUstream stream, CUgraphNodeType type, std::function<void()> body) {
  return rt::LaunchWork(stream, type, std::move(body));
}

CUresult Sync(CUstream stream, CUgraphNodeType type, std::function<void()> body) {
  if (CUresult r = Async(stream, type, std::move(body)); r != CUDA_SUCCESS) return r;
  return rt::StreamSynchronize(stream);
}

CUresult Copy(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream, bool async) {
  if (bytes == 0) return CUDA_SUCCESS;
  if (dst == 0 || src == 0) return CUDA_ERROR_INVALID_VALUE;
  auto body = [=] { std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes); };
  return async ? Async(stream, CU_GRAPH_NODE_TYPE_MEMCPY, body) : Sync(stream, CU_GRAPH_NODE_TYPE_MEMCPY, body);
}

// Fills `count` elements of `width` bytes (1, 2 or 4) with the low bytes of `value`.
CUresult Set(CUdeviceptr dst, unsigned value, size_t width, size_t count, CUstream stream, bool async) {
  if (count == 0) return CUDA_SUCCESS;
  if (dst == 0 || dst % width != 0) return CUDA_ERROR_INVALID_VALUE;
  auto body = [=] {
    auto* out = reinterpret_cast<unsigned char*>(dst);
    for (size_t i = 0; i < count; ++i) std::memcpy(out + i * width, &value, width);  // little-endian
  };
  return async ? Async(stream, CU_GRAPH_NODE_TYPE_MEMSET, body) : Sync(stream, CU_GRAPH_NODE_TYPE_MEMSET, body);
}

CUdeviceptr Ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace
}  // namespace ncclsim::driver

namespace drv = ncclsim::driver;
using drv::Copy;
using drv::PerThread;
using drv::Ptr;
using drv::Set;

NCCLSIM_DRIVER_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* ptr, size_t bytes) {
  if (ptr == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  CUresult r = drv::rt::Malloc(&p, bytes);
  *ptr = Ptr(p);
  return r;
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr) {
  return drv::rt::Free(reinterpret_cast<void*>(ptr));
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return drv::rt::MemGetInfo(free_bytes, total_bytes);
}

// Synchronous copies: legacy default stream, or the per-thread one for _ptds.
#define NCCLSIM_COPY(name, dst_t, src_t, dst_expr, src_expr)                                        \
  NCCLSIM_DRIVER_EXPORT CUresult name(dst_t dst, src_t src, size_t n) {                             \
    return Copy(dst_expr, src_expr, n, CU_STREAM_LEGACY, false);                                    \
  }                                                                                                 \
  NCCLSIM_DRIVER_EXPORT CUresult name##_ptds(dst_t dst, src_t src, size_t n) {                      \
    return Copy(dst_expr, src_expr, n, CU_STREAM_PER_THREAD, false);                                \
  }
NCCLSIM_COPY(cuMemcpy, CUdeviceptr, CUdeviceptr, dst, src)
NCCLSIM_COPY(cuMemcpyHtoD_v2, CUdeviceptr, const void*, dst, Ptr(src))
NCCLSIM_COPY(cuMemcpyDtoH_v2, void*, CUdeviceptr, Ptr(dst), src)
NCCLSIM_COPY(cuMemcpyDtoD_v2, CUdeviceptr, CUdeviceptr, dst, src)
#undef NCCLSIM_COPY

#define NCCLSIM_COPY_ASYNC(name, dst_t, src_t, dst_expr, src_expr)                                  \
  NCCLSIM_DRIVER_EXPORT CUresult name(dst_t dst, src_t src, size_t n, CUstream s) {                 \
    return Copy(dst_expr, src_expr, n, s, true);                                                    \
  }                                                                                                 \
  NCCLSIM_DRIVER_EXPORT CUresult name##_ptsz(dst_t dst, src_t src, size_t n, CUstream s) {          \
    return Copy(dst_expr, src_expr, n, PerThread(s), true);                                         \
  }
NCCLSIM_COPY_ASYNC(cuMemcpyAsync, CUdeviceptr, CUdeviceptr, dst, src)
NCCLSIM_COPY_ASYNC(cuMemcpyHtoDAsync_v2, CUdeviceptr, const void*, dst, Ptr(src))
NCCLSIM_COPY_ASYNC(cuMemcpyDtoHAsync_v2, void*, CUdeviceptr, Ptr(dst), src)
NCCLSIM_COPY_ASYNC(cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr, dst, src)
#undef NCCLSIM_COPY_ASYNC

// Peer copies: all devices share the host's memory.
NCCLSIM_DRIVER_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext, CUdeviceptr src, CUcontext, size_t n) {
  return Copy(dst, src, n, CU_STREAM_LEGACY, false);
}
NCCLSIM_DRIVER_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext, CUdeviceptr src, CUcontext, size_t n,
                                                 CUstream s) {
  return Copy(dst, src, n, s, true);
}

#define NCCLSIM_SET(name, type, width)                                                              \
  NCCLSIM_DRIVER_EXPORT CUresult name(CUdeviceptr dst, type v, size_t n) {                          \
    return Set(dst, v, width, n, CU_STREAM_LEGACY, false);                                          \
  }                                                                                                 \
  NCCLSIM_DRIVER_EXPORT CUresult name##_ptds(CUdeviceptr dst, type v, size_t n) {                   \
    return Set(dst, v, width, n, CU_STREAM_PER_THREAD, false);                                      \
  }
NCCLSIM_SET(cuMemsetD8_v2, unsigned char, 1)
NCCLSIM_SET(cuMemsetD16_v2, unsigned short, 2)
NCCLSIM_SET(cuMemsetD32_v2, unsigned int, 4)
#undef NCCLSIM_SET

#define NCCLSIM_SET_ASYNC(name, type, width)                                                        \
  NCCLSIM_DRIVER_EXPORT CUresult name(CUdeviceptr dst, type v, size_t n, CUstream s) {              \
    return Set(dst, v, width, n, s, true);                                                          \
  }                                                                                                 \
  NCCLSIM_DRIVER_EXPORT CUresult name##_ptsz(CUdeviceptr dst, type v, size_t n, CUstream s) {       \
    return Set(dst, v, width, n, PerThread(s), true);                                               \
  }
NCCLSIM_SET_ASYNC(cuMemsetD8Async, unsigned char, 1)
NCCLSIM_SET_ASYNC(cuMemsetD16Async, unsigned short, 2)
NCCLSIM_SET_ASYNC(cuMemsetD32Async, unsigned int, 4)
#undef NCCLSIM_SET_ASYNC
