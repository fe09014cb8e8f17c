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
  return ok;
}

}  // namespace ncclwatch::preload
