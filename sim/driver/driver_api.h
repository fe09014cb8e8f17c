// Shared by every file that defines driver entry points.
//
// __CUDA_API_VERSION_INTERNAL makes cuda.h declare every ABI variant under its real exported name
// (cuMemAlloc and cuMemAlloc_v2, cuStreamQuery and cuStreamQuery_ptsz, ...) instead of #defining
// the plain names to the newest one, exactly what a libcuda implementation needs.
#ifndef NCCLWATCH_SIM_DRIVER_DRIVER_API_H_
#define NCCLWATCH_SIM_DRIVER_DRIVER_API_H_

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

// Exported C entry point; the version script (libcuda.map) exports cu* without a version node, as
// the real libcuda.so.1 does.
#define NCCLSIM_DRIVER_EXPORT extern "C" __attribute__((visibility("default")))

namespace ncclsim::driver {

constexpr int kDriverVersion = 13000;

// CUDA_SUCCESS for a device ordinal in [0, device count), CUDA_ERROR_INVALID_DEVICE otherwise
// (CUDA_ERROR_NO_DEVICE when the sim has no devices).
CUresult CheckDevice(CUdevice device);

// The stream a _ptsz/_ptds entry point means: its handle 0 is the calling thread's default stream.
inline CUstream PerThread(CUstream stream) { return stream ? stream : CU_STREAM_PER_THREAD; }

}  // namespace ncclsim::driver

#endif  // NCCLWATCH_SIM_DRIVER_DRIVER_API_H_
