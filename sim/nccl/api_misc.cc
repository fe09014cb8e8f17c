// Version, error strings, memory and registration entry points.
#include <nccl.h>

#include <cuda_runtime_api.h>

#include "export.h"
#include "last_error.h"

using ncclsim::SetLastError;

NCCLSIM_API(ncclResult_t, ncclGetVersion, int* version) {
  if (version == nullptr) {
    SetLastError("ncclGetVersion: version argument is NULL");
    return ncclInvalidArgument;
  }
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

NCCLSIM_API(const char*, ncclGetErrorString, ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

NCCLSIM_API(const char*, ncclGetLastError, ncclComm_t comm) {
  (void)comm;
  return ncclsim::LastError();
}

NCCLSIM_API(void, ncclResetDebugInit) {}

extern "C" __attribute__((visibility("default"))) void ncclResetDebugInitInternal() {}

NCCLSIM_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size) {
  if (ptr == nullptr) {
    SetLastError("ncclMemAlloc: ptr argument is NULL");
    return ncclInvalidArgument;
  }
  if (cudaMalloc(ptr, size) != cudaSuccess) {
    SetLastError("ncclMemAlloc: cudaMalloc failed");
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclMemFree, void* ptr) {
  if (ptr != nullptr && cudaFree(ptr) != cudaSuccess) {
    SetLastError("ncclMemFree: cudaFree failed");
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommRegister, const ncclComm_t comm, void* buff, size_t size, void** handle) {
  (void)buff, (void)size;
  if (comm == nullptr || handle == nullptr) {
    SetLastError("ncclCommRegister: comm or handle argument is NULL");
    return ncclInvalidArgument;
  }
  *handle = comm;  // registration is a no-op; any non-null token will do
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm, void* handle) {
  (void)handle;
  if (comm == nullptr) {
    SetLastError("ncclCommDeregister: comm argument is NULL");
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
            int winFlags) {
  (void)comm, (void)buff, (void)size, (void)win, (void)winFlags;
  SetLastError("ncclCommWindowRegister: symmetric windows are not implemented by the sim");
  return ncclInvalidUsage;
}

NCCLSIM_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  (void)comm, (void)win;
  SetLastError("ncclCommWindowDeregister: symmetric windows are not implemented by the sim");
  return ncclInvalidUsage;
}
