// The CUDA driver functions the tracker records and polls completion events with.
//
// Why the driver: a driver call reports through its return value and never touches the
// runtime's per-thread last error. A job that polls cudaStreamQuery and never clears the
// cudaErrorNotReady it leaves pending (common in C jobs and benchmark clients) must be
// tracked exactly like one that clears it, and must read the same last error with us.
//
// Resolved from an already loaded libcuda.so.1 (RTLD_NOLOAD), else by loading it
// RTLD_LAZY|RTLD_LOCAL; never linked. CUstream is cudaStream_t and CUevent is cudaEvent_t.
#ifndef NCCLWATCH_PRELOAD_REAL_DRIVER_API_H_
#define NCCLWATCH_PRELOAD_REAL_DRIVER_API_H_

#include <cuda.h>

#include <cstdint>

namespace ncclwatch::preload {

struct DriverApi {
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*PrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*CtxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*CtxPushCurrent)(CUcontext) = nullptr;
  CUresult (*CtxPopCurrent)(CUcontext*) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*EventCreate)(CUevent*, unsigned int) = nullptr;
  CUresult (*EventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*EventQuery)(CUevent) = nullptr;
  CUresult (*StreamIsCapturing)(CUstream, CUstreamCaptureStatus*) = nullptr;

  // Optional (Resolve succeeds without them): which graph a capturing stream records into,
  // to tell which CUDA graph an NCCL op was captured into (observe/graph_registry.h). _v3
  // (CUDA 12.3+, edge data besides), else _v2 (CUDA 11.3+).
  CUresult (*StreamGetCaptureInfoV3)(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*, const CUgraphNode**,
                                     const CUgraphEdgeData**, size_t*) = nullptr;
  CUresult (*StreamGetCaptureInfoV2)(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*, const CUgraphNode**,
                                     size_t*) = nullptr;

  // True when every function above was found (the optional ones aside).
  bool Resolve();
  // The capture `stream` is in: its id and graph; false when it captures nothing, or the
  // driver cannot tell.
  bool CaptureGraph(CUstream stream, uint64_t* capture_id, CUgraph* graph) const;
};

// The driver's name for a runtime stream handle: 0 (the legacy default stream, as NCCL
// enqueues on it) is CU_STREAM_LEGACY; cudaStreamLegacy / cudaStreamPerThread already equal
// CU_STREAM_LEGACY / CU_STREAM_PER_THREAD; any other handle is the same object.
inline CUstream DriverStream(uint64_t runtime_stream) {
  return runtime_stream == 0 ? CU_STREAM_LEGACY : reinterpret_cast<CUstream>(runtime_stream);
}

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_REAL_DRIVER_API_H_
