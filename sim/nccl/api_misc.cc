// Version, error strings, memory and registration entry points.
#include <nccl.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "export.h"
#include "last_error.h"
#include "nccl_api_232.h"

using ncclsim::ResetDebugConfig;
using ncclsim::SetLastError;

namespace {

// NCCLSIM_VERSION=2.28.9 (or the code, 22809) makes GetVersion report another release;
// the default is the release whose API the sim covers, 2.32.3.
int ReportedVersion() {
  static const int version = [] {
    const char* text = std::getenv("NCCLSIM_VERSION");
    if (text == nullptr || *text == '\0') return ncclsim::v232::kVersionCode;
    int major = 0, minor = 0, patch = 0, code = 0;
    char tail = 0;
    if (std::sscanf(text, "%d.%d.%d%c", &major, &minor, &patch, &tail) == 3 && major >= 2 && minor >= 0 &&
        minor < 100 && patch >= 0 && patch < 100)
      return major * 10000 + minor * 100 + patch;
    if (std::sscanf(text, "%d%c", &code, &tail) == 1 && code >= 20000) return code;
    std::fprintf(stderr, "NCCLSIM_VERSION: '%s' is neither 2.X.Y nor a version code; reporting 2.32.3\n", text);
    return ncclsim::v232::kVersionCode;
  }();
  return version;
}

}  // namespace

NCCLSIM_API(ncclResult_t, ncclGetVersion, int* version) {
  if (version == nullptr) {
    SetLastError("ncclGetVersion: version argument is NULL");
    return ncclInvalidArgument;
  }
  *version = ReportedVersion();
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
    case ncclsim::v232::ncclTimeout: return "NCCL operation timed out";
    default: return "unknown result code";
  }
}

NCCLSIM_API(const char*, ncclGetLastError, ncclComm_t comm) {
  (void)comm;
  return ncclsim::LastError();
}

NCCLSIM_API(void, ncclResetDebugInit) { ResetDebugConfig(); }

extern "C" __attribute__((visibility("default"))) void ncclResetDebugInitInternal() { ResetDebugConfig(); }

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
