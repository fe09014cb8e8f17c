// Kernel launches, occupancy and tensor maps. A launch is checked like CUDA checks it and then
// takes its place in the stream as a no-op (device code never runs on the sim).
#include <algorithm>
#include <cstring>

#include "driver_api.h"
#include "module.h"
#include "runtime_link.h"

namespace ncclsim::driver {
namespace {

// H100 (sm_90) limits used for validation and occupancy.
constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxGridY = 65535, kMaxGridZ = 65535, kMaxBlockZ = 64;
constexpr int kMaxThreadsPerSm = 2048;
constexpr int kMaxBlocksPerSm = 32;
constexpr size_t kSharedPerSm = 228 << 10;
constexpr size_t kSharedPerBlockOptIn = 227 << 10;
constexpr int kMultiProcessors = 132;

CUresult Launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                unsigned shared_bytes, CUstream stream) {
  if (ResolveFunction(f) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0) return CUDA_ERROR_INVALID_VALUE;
  if (gy > kMaxGridY || gz > kMaxGridZ || bz > kMaxBlockZ) return CUDA_ERROR_INVALID_VALUE;
  if (uint64_t{bx} * by * bz > kMaxThreadsPerBlock || shared_bytes > kSharedPerBlockOptIn) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return rt::LaunchNoOp(stream);
}

CUresult LaunchEx(const CUlaunchConfig* config, CUfunction f, bool per_thread) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUstream stream = per_thread ? PerThread(config->hStream) : config->hStream;
  return Launch(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX, config->blockDimY,
                config->blockDimZ, config->sharedMemBytes, stream);
}

int ActiveBlocks(int block_size, size_t shared_bytes) {
  if (block_size <= 0 || block_size > static_cast<int>(kMaxThreadsPerBlock)) return 0;
  const int warps_rounded = (block_size + 31) / 32 * 32;
  int blocks = std::min(kMaxBlocksPerSm, kMaxThreadsPerSm / warps_rounded);
  if (shared_bytes > 0) blocks = std::min<int>(blocks, static_cast<int>(kSharedPerSm / shared_bytes));
  return blocks;
}

CUresult MaxActiveBlocks(int* blocks, CUfunction f, int block_size, size_t shared_bytes) {
  if (blocks == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ResolveFunction(f) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *blocks = ActiveBlocks(block_size, shared_bytes);
  return CUDA_SUCCESS;
}

// The largest block size (multiple of 32, within `limit`) that reaches the best occupancy.
CUresult PotentialBlockSize(int* min_grid, int* block_size, CUfunction f, CUoccupancyB2DSize shared_of,
                            size_t shared_bytes, int limit) {
  if (min_grid == nullptr || block_size == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ResolveFunction(f) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const int max_block = limit > 0 ? std::min(limit, static_cast<int>(kMaxThreadsPerBlock)) : kMaxThreadsPerBlock;
  int best_threads = 0, best_block = 0, best_blocks = 0;
  for (int b = max_block / 32 * 32; b >= 32; b -= 32) {
    const int blocks = ActiveBlocks(b, shared_of ? shared_of(b) : shared_bytes);
    if (blocks * b > best_threads) best_threads = blocks * b, best_block = b, best_blocks = blocks;
  }
  *block_size = best_block;
  *min_grid = best_blocks * kMultiProcessors;
  return CUDA_SUCCESS;
}

CUresult EncodeTiled(CUtensorMap* map, cuuint32_t rank, void* address, const cuuint64_t* dims,
                     const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* element_strides) {
  if (map == nullptr || address == nullptr || dims == nullptr || box == nullptr || element_strides == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (rank == 0 || rank > 5 || reinterpret_cast<uintptr_t>(address) % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  if (rank > 1 && strides == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 || box[i] == 0 || box[i] > 256 || element_strides[i] == 0 || element_strides[i] > 8) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (i + 1 < rank && strides[i] % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  }
  // The descriptor is opaque to the host; the sim stores just the address where CUDA's first
  // word holds it, so a reader sees something plausible.
  std::memset(map, 0, sizeof(*map));
  std::memcpy(map->opaque, &address, sizeof(address));
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace ncclsim::driver

namespace drv = ncclsim::driver;
using drv::PerThread;

#define NCCLSIM_LAUNCH(name, stream_expr)                                                             \
  NCCLSIM_DRIVER_EXPORT CUresult name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, \
                                      unsigned by, unsigned bz, unsigned shared, CUstream s, void**, void**) { \
    return drv::Launch(f, gx, gy, gz, bx, by, bz, shared, stream_expr);                                \
  }
NCCLSIM_LAUNCH(cuLaunchKernel, s)
NCCLSIM_LAUNCH(cuLaunchKernel_ptsz, PerThread(s))
#undef NCCLSIM_LAUNCH

#define NCCLSIM_LAUNCH_COOP(name, stream_expr)                                                         \
  NCCLSIM_DRIVER_EXPORT CUresult name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, \
                                      unsigned by, unsigned bz, unsigned shared, CUstream s, void**) {  \
    return drv::Launch(f, gx, gy, gz, bx, by, bz, shared, stream_expr);                                \
  }
NCCLSIM_LAUNCH_COOP(cuLaunchCooperativeKernel, s)
NCCLSIM_LAUNCH_COOP(cuLaunchCooperativeKernel_ptsz, PerThread(s))
#undef NCCLSIM_LAUNCH_COOP

NCCLSIM_DRIVER_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void**, void**) {
  return drv::LaunchEx(config, f, false);
}
NCCLSIM_DRIVER_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void**, void**) {
  return drv::LaunchEx(config, f, true);
}

NCCLSIM_DRIVER_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction f, int block_size,
                                                                           size_t shared_bytes) {
  return drv::MaxActiveBlocks(blocks, f, block_size, shared_bytes);
}
NCCLSIM_DRIVER_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, CUfunction f,
                                                                                    int block_size,
                                                                                    size_t shared_bytes, unsigned) {
  return drv::MaxActiveBlocks(blocks, f, block_size, shared_bytes);
}
NCCLSIM_DRIVER_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int* min_grid, int* block_size, CUfunction f,
                                                                CUoccupancyB2DSize shared_of, size_t shared_bytes,
                                                                int limit) {
  return drv::PotentialBlockSize(min_grid, block_size, f, shared_of, shared_bytes, limit);
}
NCCLSIM_DRIVER_EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int* min_grid, int* block_size,
                                                                         CUfunction f, CUoccupancyB2DSize shared_of,
                                                                         size_t shared_bytes, int limit, unsigned) {
  return drv::PotentialBlockSize(min_grid, block_size, f, shared_of, shared_bytes, limit);
}
NCCLSIM_DRIVER_EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, CUfunction f, int blocks,
                                                                       int block_size) {
  if (bytes == nullptr || blocks <= 0 || block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (drv::ResolveFunction(f) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *bytes = std::min(drv::kSharedPerSm / static_cast<size_t>(blocks), drv::kSharedPerBlockOptIn);
  return CUDA_SUCCESS;
}

NCCLSIM_DRIVER_EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank,
                                                      void* address, const cuuint64_t* dims,
                                                      const cuuint64_t* strides, const cuuint32_t* box,
                                                      const cuuint32_t* element_strides, CUtensorMapInterleave,
                                                      CUtensorMapSwizzle, CUtensorMapL2promotion,
                                                      CUtensorMapFloatOOBfill) {
  if (type < 0 || type > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B) return CUDA_ERROR_INVALID_VALUE;
  return drv::EncodeTiled(map, rank, address, dims, strides, box, element_strides);
}
