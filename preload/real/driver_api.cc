#include "preload/real/driver_api.h"

#include <dlfcn.h>

#include "preload/real/real_dl.h"

namespace ncclwatch::preload {
namespace {

void* OpenDriver() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
  if (handle == nullptr) handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  return handle;
}

template <typename Fn>
bool Find(void* driver, const char* name, Fn** out) {
  DlsymFn* real_dlsym = RealDlsym();
  *out = real_dlsym == nullptr ? nullptr : reinterpret_cast<Fn*>(real_dlsym(driver, name));
  return *out != nullptr;
}

}  // namespace

bool DriverApi::Resolve() {
  void* driver = OpenDriver();
  if (driver == nullptr) return false;
  // The versioned names are what cuda.h's macros map the plain ones to since CUDA 4.0.
  bool ok = Find(driver, "cuDeviceGet", &DeviceGet);
  ok &= Find(driver, "cuDevicePrimaryCtxRetain", &PrimaryCtxRetain);
  ok &= Find(driver, "cuCtxGetCurrent", &CtxGetCurrent);
  ok &= Find(driver, "cuCtxPushCurrent_v2", &CtxPushCurrent);
  ok &= Find(driver, "cuCtxPopCurrent_v2", &CtxPopCurrent);
  ok &= Find(driver, "cuCtxSetCurrent", &CtxSetCurrent);
  ok &= Find(driver, "cuEventCreate", &EventCreate);
  ok &= Find(driver, "cuEventRecord", &EventRecord);
  ok &= Find(driver, "cuEventQuery", &EventQuery);
  ok &= Find(driver, "cuStreamIsCapturing", &StreamIsCapturing);
  if (!Find(driver, "cuStreamGetCaptureInfo_v3", &StreamGetCaptureInfoV3)) {
    Find(driver, "cuStreamGetCaptureInfo_v2", &StreamGetCaptureInfoV2);
  }
  return ok;
}

bool DriverApi::CaptureGraph(CUstream stream, uint64_t* capture_id, CUgraph* graph) const {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUgraph captured = nullptr;
  CUresult result = CUDA_ERROR_NOT_FOUND;
  if (StreamGetCaptureInfoV3 != nullptr) {
    result = StreamGetCaptureInfoV3(stream, &status, &id, &captured, nullptr, nullptr, nullptr);
  } else if (StreamGetCaptureInfoV2 != nullptr) {
    result = StreamGetCaptureInfoV2(stream, &status, &id, &captured, nullptr, nullptr);
  }
  if (result != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_ACTIVE || captured == nullptr) return false;
  *capture_id = id;
  *graph = captured;
  return true;
}

}  // namespace ncclwatch::preload
