#include "preload/real/cuda_api.h"

#include "preload/real/resolver.h"

namespace ncclwatch::preload {
namespace {

template <typename Fn>
bool Find(const char* name, Fn** out) {
  *out = reinterpret_cast<Fn*>(ResolveNext(Library::kCudart, name, nullptr));
  return *out != nullptr;
}

}  // namespace

bool CudaApi::Resolve() {
  bool ok = Find("cudaGetDevice", &GetDevice);
  ok &= Find("cudaSetDevice", &SetDevice);
  ok &= Find("cudaGetLastError", &GetLastError);
  ok &= Find("cudaPeekAtLastError", &PeekAtLastError);
  ok &= Find("cudaEventCreateWithFlags", &EventCreateWithFlags);
  ok &= Find("cudaEventRecord", &EventRecord);
  ok &= Find("cudaEventQuery", &EventQuery);
  ok &= Find("cudaStreamIsCapturing", &StreamIsCapturing);
  ok &= Find("cudaThreadExchangeStreamCaptureMode", &ThreadExchangeStreamCaptureMode);
  return ok;
}

}  // namespace ncclwatch::preload
