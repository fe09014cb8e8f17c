// cudaGetDriverEntryPoint(ByVersion)(_ptsz): forward to the loaded driver's cuGetProcAddress_v2
// (the sim's libcuda.so.1, or whichever libcuda.so.1 the process has), as the real runtime does:
// a symbol the driver does not have is cudaSuccess with a null function and
// cudaDriverEntryPointSymbolNotFound (cuda_runtime_api.h: "The API will return cudaSuccess and
// set the returned funcPtr to NULL if ... the driver symbol is invalid"); a version newer than
// the driver is cudaErrorInvalidValue. Without a driver library or that symbol, the request
// finds nothing. cudaGetDriverEntryPoint asks for the runtime's own version (13000); the _ptsz
// forms, which code built with per-thread default streams calls, read cudaEnableDefault as
// cudaEnablePerThreadDefaultStream. Also the profiler switches, which have nothing to switch here.
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "api_common.h"

namespace ncclsim {
namespace {

using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

// The driver's cuGetProcAddress_v2, or null. Prefers an already loaded libcuda.so.1.
GetProcAddressFn DriverGetProcAddress() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
  if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return nullptr;
  return reinterpret_cast<GetProcAddressFn>(dlsym(driver, "cuGetProcAddress_v2"));
}

cudaError_t FromDriver(CUresult result) {
  switch (result) {
    case CUDA_SUCCESS:
    case CUDA_ERROR_NOT_FOUND: return cudaSuccess;  // the status says what was found
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    default: return cudaErrorUnknown;
  }
}

// cudaEnableDefault of a _ptsz entry: the per-thread default stream it was built for.
unsigned long long PerThreadDefault(unsigned long long flags) {
  return flags == cudaEnableDefault ? static_cast<unsigned long long>(cudaEnablePerThreadDefaultStream) : flags;
}

cudaError_t EntryPoint(const char* symbol, void** function, unsigned version, unsigned long long flags,
                       cudaDriverEntryPointQueryResult* status) {
  if (symbol == nullptr || function == nullptr) return cudaErrorInvalidValue;
  *function = nullptr;
  if (status) *status = cudaDriverEntryPointSymbolNotFound;
  static const GetProcAddressFn get_proc_address = DriverGetProcAddress();
  if (get_proc_address == nullptr) return cudaSuccess;
  CUdriverProcAddressQueryResult driver_status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult result = get_proc_address(symbol, function, static_cast<int>(version), flags, &driver_status);
  // cudaDriverEntryPointQueryResult mirrors CUdriverProcAddressQueryResult value for value.
  if (status) *status = static_cast<cudaDriverEntryPointQueryResult>(driver_status);
  return FromDriver(result);
}

}  // namespace
}  // namespace ncclsim

NCCLSIM_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** function,
                                                            unsigned int version, unsigned long long flags,
                                                            cudaDriverEntryPointQueryResult* status) {
  return ncclsim::Report(ncclsim::EntryPoint(symbol, function, version, flags, status));
}
NCCLSIM_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** function,
                                                                 unsigned int version, unsigned long long flags,
                                                                 cudaDriverEntryPointQueryResult* status) {
  return ncclsim::Report(
      ncclsim::EntryPoint(symbol, function, version, ncclsim::PerThreadDefault(flags), status));
}
NCCLSIM_EXPORT cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** function, unsigned long long flags,
                                                   cudaDriverEntryPointQueryResult* status) {
  return ncclsim::Report(ncclsim::EntryPoint(symbol, function, CUDART_VERSION, flags, status));
}
NCCLSIM_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** function,
                                                        unsigned long long flags,
                                                        cudaDriverEntryPointQueryResult* status) {
  return ncclsim::Report(
      ncclsim::EntryPoint(symbol, function, CUDART_VERSION, ncclsim::PerThreadDefault(flags), status));
}
NCCLSIM_EXPORT cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
NCCLSIM_EXPORT cudaError_t cudaProfilerStop(void) { return cudaSuccess; }
