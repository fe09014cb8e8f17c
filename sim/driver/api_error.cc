// cuGetErrorString / cuGetErrorName for every code this library returns, and the one-line report
// of an entry point the sim does not implement.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "driver_api.h"
#include "proc_table.h"

namespace ncclsim::driver {
namespace {

struct ErrorText {
  CUresult code;
  const char* name;
  const char* description;  // the real driver's text
};

#define NCCLSIM_ERROR(code, text) {code, #code, text}
constexpr ErrorText kErrors[] = {
    NCCLSIM_ERROR(CUDA_SUCCESS, "no error"),
    NCCLSIM_ERROR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    NCCLSIM_ERROR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    NCCLSIM_ERROR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    NCCLSIM_ERROR(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    NCCLSIM_ERROR(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    NCCLSIM_ERROR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    NCCLSIM_ERROR(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    NCCLSIM_ERROR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    NCCLSIM_ERROR(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped"),
    NCCLSIM_ERROR(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
    NCCLSIM_ERROR(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    NCCLSIM_ERROR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    NCCLSIM_ERROR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    NCCLSIM_ERROR(CUDA_ERROR_NOT_READY, "device not ready"),
    NCCLSIM_ERROR(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    NCCLSIM_ERROR(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"),
    NCCLSIM_ERROR(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                  "operation would make the legacy stream depend on a capturing blocking stream"),
    NCCLSIM_ERROR(CUDA_ERROR_UNKNOWN, "unknown error"),
};
#undef NCCLSIM_ERROR

const ErrorText* Find(CUresult code) {
  for (const ErrorText& e : kErrors) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

// Unknown codes give CUDA_ERROR_INVALID_VALUE and a null string, as documented in cuda.h.
CUresult Lookup(CUresult code, const char** out, const char* ErrorText::*field) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* e = Find(code);
  *out = e ? e->*field : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // namespace

static_assert(CUDA_ERROR_NOT_SUPPORTED == 801, "proc_table.h documents 801");

int ReportUnsupported(const char* name) {
  static std::mutex* mu = new std::mutex();  // never destroyed: may be called during exit
  static std::set<std::string>* reported = new std::set<std::string>();
  std::lock_guard lock(*mu);
  if (reported->insert(name).second) {
    std::fprintf(stderr, "ncclsim libcuda: %s is not supported (CUDA_ERROR_NOT_SUPPORTED)\n", name);
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

bool DebugEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("NCCLSIM_DRIVER_DEBUG");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return enabled;
}

}  // namespace ncclsim::driver

NCCLSIM_DRIVER_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  return ncclsim::driver::Lookup(error, text, &ncclsim::driver::ErrorText::description);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  return ncclsim::driver::Lookup(error, name, &ncclsim::driver::ErrorText::name);
}
