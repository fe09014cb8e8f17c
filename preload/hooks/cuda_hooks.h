// The generated CUDA hooks (cuda_api_table.h) as lookups hand them out: dlsym by exported name
// (dlsym_hook.cc), and the driver's entry-point lookups (cuGetProcAddress(_v2),
// cudaGetDriverEntryPoint(ByVersion)(_ptsz): the lookup rows) by the base name they were asked
// for. A static CUDA runtime (CuPy, XLA, NCCL's own, cuBLAS's) reaches the driver only that
// way: function pointers from cuGetProcAddress, itself found with dlsym.
//
// A hook handed out is bound to the very function the lookup found, never to one the preload
// resolves itself: the driver picked the ABI variant for the caller's CUDA version and flags
// (cuCtxSynchronize is cuCtxSynchronize_v2 at 13000, cuStreamSynchronize is
// cuStreamSynchronize_ptsz with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM), and another
// library's definition (a second libcudart, another interposer) keeps its place in the chain.
#ifndef NCCLWATCH_PRELOAD_HOOKS_CUDA_HOOKS_H_
#define NCCLWATCH_PRELOAD_HOOKS_CUDA_HOOKS_H_

namespace ncclwatch::preload {

// Distinct functions one row can be bound to. A process has one driver and one or two CUDA
// runtimes (torch's and a second major version's); the NCCL side allows as many libraries.
inline constexpr int kMaxCudaBindings = 4;

// Index of the exported name `name` among the table's rows; -1 when it is not hooked.
int CudaApiIndex(const char* name) noexcept;

// The hook of row `api` that forwards to `real` (a function of another library, never ours);
// `real` itself when the row's bindings are all taken (one warning), nullptr for a bad row.
void* CudaHookBoundTo(int api, void* real) noexcept;

// What an entry-point lookup of the base name `symbol` hands out in place of `found`, the
// function the driver answered: our hook bound to `found` when `found` is the exported function
// of a driver row whose base name is `symbol` (dladdr names it: which ABI variant the driver
// picked); `found` itself for anything else, ours included.
void* CudaHookForEntryPoint(const char* symbol, void* found) noexcept;

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_HOOKS_CUDA_HOOKS_H_
