// cuGetProcAddress: the newest ABI variant of a named entry point that the caller's CUDA version
// knows, as documented in cuda.h.
//
//  - unknown name: CUDA_ERROR_NOT_FOUND, *pfn = null, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
//  - cudaVersion older than the name's first variant: CUDA_SUCCESS, *pfn = null,
//    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
//  - cudaVersion newer than the driver (13000): CUDA_ERROR_INVALID_VALUE ("If the specified CUDA
//    version is greater than the driver version, the API will return CUDA_ERROR_INVALID_VALUE").
// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM prefers the _ptsz/_ptds variant where one exists;
// the default flags mean the legacy stream, as for any caller not built with per-thread streams.
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "driver_api.h"
#include "proc_table.h"

namespace ncclsim::driver {
namespace {

// The newest entry named `symbol` of the given kind with version <= cuda_version; `found_any`
// tells whether the name exists at all with that kind.
const ProcEntry* Newest(const char* symbol, int cuda_version, bool per_thread, bool* found_any) {
  size_t count = 0;
  const ProcEntry* table = ProcTable(&count);
  const ProcEntry* best = nullptr;
  for (size_t i = 0; i < count; ++i) {
    const ProcEntry& e = table[i];
    if (e.per_thread != per_thread || std::strcmp(e.base, symbol) != 0) continue;
    *found_any = true;
    if (e.version <= cuda_version && (best == nullptr || e.version > best->version)) best = &e;
  }
  return best;
}

void LogUnknownOnce(const char* symbol) {
  if (!DebugEnabled()) return;
  static std::mutex* mu = new std::mutex();
  static std::set<std::string>* logged = new std::set<std::string>();
  std::lock_guard lock(*mu);
  if (logged->insert(symbol).second) {
    std::fprintf(stderr, "ncclsim libcuda: cuGetProcAddress(\"%s\"): no such entry point\n", symbol);
  }
}

CUresult GetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                        CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  constexpr cuuint64_t kKnownFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  if ((flags & ~kKnownFlags) != 0 || cuda_version > kDriverVersion) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  bool found_any = false;
  const ProcEntry* entry = nullptr;
  if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
    entry = Newest(symbol, cuda_version, /*per_thread=*/true, &found_any);
  }
  if (entry == nullptr) entry = Newest(symbol, cuda_version, /*per_thread=*/false, &found_any);
  CUdriverProcAddressQueryResult result = CU_GET_PROC_ADDRESS_SUCCESS;
  if (entry != nullptr) {
    *pfn = entry->address;
  } else {
    result = found_any ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  }
  if (status != nullptr) *status = result;
  if (result == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) {
    LogUnknownOnce(symbol);
    return CUDA_ERROR_NOT_FOUND;
  }
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace ncclsim::driver

NCCLSIM_DRIVER_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version,
                                                   cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  return ncclsim::driver::GetProcAddress(symbol, pfn, cuda_version, flags, status);
}
NCCLSIM_DRIVER_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) {
  return ncclsim::driver::GetProcAddress(symbol, pfn, cuda_version, flags, nullptr);
}
