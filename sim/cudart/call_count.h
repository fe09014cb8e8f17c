// How many CUDA calls the calling thread made: the sim's way for a test or a benchmark to
// check what a watcher's hook costs in CUDA calls ("one call per op"), without a GPU.
//
// Counted: every entry point the preload itself calls (preload/real/cuda_api.h, preload/real/driver_api.h):
// the runtime's cudaGetDevice, cudaSetDevice, cudaGetLastError, cudaPeekAtLastError,
// cudaEventCreateWithFlags, cudaEventRecord, cudaEventQuery, cudaStreamIsCapturing,
// cudaThreadExchangeStreamCaptureMode, and the driver's cuDeviceGet, cuDevicePrimaryCtxRetain,
// cuCtxGetCurrent, cuCtxSetCurrent, cuCtxPushCurrent(_v2), cuCtxPopCurrent(_v2), cuEventCreate,
// cuEventRecord, cuEventQuery, cuStreamIsCapturing (a driver call that the runtime serves counts
// once). Per thread, so a watcher's own polling thread never shows in the job thread's count.
// Always on: one thread-local increment (under 1 ns) per counted call.
#ifndef NCCLWATCH_SIM_CUDART_CALL_COUNT_H_
#define NCCLWATCH_SIM_CUDART_CALL_COUNT_H_

#include <cstdint>

extern "C" {
// Counts one call on the calling thread (the sim driver's entry points not served by the runtime).
void ncclsim_rt_count_call(void);
// The counted calls the calling thread made so far. Exported under NCCLSIM_PRIVATE: sim-only.
uint64_t ncclsim_rt_calls_by_this_thread(void);
}

namespace ncclsim {
// Initial-exec: one instruction, no __tls_get_addr, so counting barely changes what it measures.
inline __attribute__((tls_model("initial-exec"))) thread_local uint64_t calls_by_this_thread = 0;
inline void CountCall() { ++calls_by_this_thread; }
}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_CUDART_CALL_COUNT_H_
