#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <catch2/catch.hpp>

// Declared by cuda_runtime_api.h only for code built with per-thread default streams.
extern "C" cudaError_t cudaGetDriverEntryPoint_ptsz(const char*, void**, unsigned long long,
                                                    cudaDriverEntryPointQueryResult*);
extern "C" cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char*, void**, unsigned int, unsigned long long,
                                                             cudaDriverEntryPointQueryResult*);

namespace {

void* Lookup(const char* name, int version, cuuint64_t flags, CUresult* result,
             CUdriverProcAddressQueryResult* status) {
  void* fn = reinterpret_cast<void*>(1);
  *result = cuGetProcAddress(name, &fn, version, flags, status);
  return fn;
}

}  // namespace

TEST_CASE("cuGetProcAddress finds cuInit and refuses an unknown name", "[proc]") {
  CUresult r;
  CUdriverProcAddressQueryResult status;
  void* fn = Lookup("cuInit", 13000, CU_GET_PROC_ADDRESS_DEFAULT, &r, &status);
  REQUIRE(r == CUDA_SUCCESS);
  CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
  CHECK(fn == reinterpret_cast<void*>(&cuInit));
  CHECK(reinterpret_cast<CUresult (*)(unsigned)>(fn)(0) == CUDA_SUCCESS);

  fn = Lookup("cuNoSuchThing", 13000, CU_GET_PROC_ADDRESS_DEFAULT, &r, &status);
  CHECK(r == CUDA_ERROR_NOT_FOUND);
  CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  CHECK(fn == nullptr);
}

TEST_CASE("cuGetProcAddress picks the ABI variant of the requested CUDA version", "[proc]") {
  CUresult r;
  CUdriverProcAddressQueryResult status;
  void* self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(self != nullptr);
  // cuMemAlloc: v1 since 2.0, _v2 since 3.2.
  CHECK(Lookup("cuMemAlloc", 12000, 0, &r, &status) == dlsym(self, "cuMemAlloc_v2"));
  CHECK(Lookup("cuMemAlloc", 3010, 0, &r, &status) == dlsym(self, "cuMemAlloc"));
  // cuStreamGetCtx: _v2 since 12.5; per-thread variants when asked for.
  CHECK(Lookup("cuStreamGetCtx", 12000, 0, &r, &status) == dlsym(self, "cuStreamGetCtx"));
  CHECK(Lookup("cuStreamGetCtx", 13000, 0, &r, &status) == dlsym(self, "cuStreamGetCtx_v2"));
  CHECK(Lookup("cuStreamGetCtx", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &r, &status) ==
        dlsym(self, "cuStreamGetCtx_v2_ptsz"));
  // No per-thread variant: the legacy one.
  CHECK(Lookup("cuMemCreate", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &r, &status) ==
        dlsym(self, "cuMemCreate"));
  CHECK(Lookup("cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &r, &status) ==
        dlsym(self, "cuMemcpyHtoD_v2_ptds"));
  dlclose(self);
}

TEST_CASE("cuGetProcAddress: too old a version is VERSION_NOT_SUFFICIENT, too new is invalid", "[proc]") {
  CUresult r;
  CUdriverProcAddressQueryResult status;
  // cuMemCreate appeared in CUDA 10.2.
  void* fn = Lookup("cuMemCreate", 10010, 0, &r, &status);
  CHECK(r == CUDA_SUCCESS);
  CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  CHECK(fn == nullptr);
  // Newer than the driver (13.0): CUDA_ERROR_INVALID_VALUE, as cuda.h documents.
  fn = Lookup("cuInit", 13010, 0, &r, &status);
  CHECK(r == CUDA_ERROR_INVALID_VALUE);
  Lookup("cuInit", 13000, 0x8, &r, &status);
  CHECK(r == CUDA_ERROR_INVALID_VALUE);  // unknown flag
}

TEST_CASE("every name torch asks for by name resolves", "[proc]") {
  const char* names[] = {"cuMemCreate", "cuMemMap", "cuMemUnmap", "cuMemRelease", "cuMemAddressReserve",
                         "cuMemAddressFree", "cuMemSetAccess", "cuMemGetAllocationGranularity",
                         "cuStreamWriteValue32", "cuStreamWaitValue32", "cuDevicePrimaryCtxGetState",
                         "cuGetErrorString", "cuGetErrorName", "cuPointerGetAttribute", "cuMulticastCreate",
                         "cuTensorMapEncodeTiled", "cuLaunchKernelEx", "cuGetProcAddress"};
  for (const char* name : names) {
    CUresult r;
    CUdriverProcAddressQueryResult status;
    INFO(name);
    CHECK(Lookup(name, 13000, 0, &r, &status) != nullptr);
    CHECK(r == CUDA_SUCCESS);
  }
}

// The host syncs a static runtime looks up, as the real driver answers them (cudaTypedefs.h:
// cuStreamSynchronize v2000 and v7000_ptsz, cuEventSynchronize v2000, cuCtxSynchronize v2000
// and _v2 v13000), and cuGetProcAddress asked for itself.
TEST_CASE("cuGetProcAddress answers the host syncs and itself by version and flags", "[proc]") {
  CUresult r;
  CUdriverProcAddressQueryResult status;
  void* self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(self != nullptr);
  CHECK(Lookup("cuStreamSynchronize", 13000, 0, &r, &status) == dlsym(self, "cuStreamSynchronize"));
  CHECK(Lookup("cuStreamSynchronize", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &r, &status) ==
        dlsym(self, "cuStreamSynchronize_ptsz"));
  CHECK(Lookup("cuStreamSynchronize", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &r, &status) ==
        dlsym(self, "cuStreamSynchronize"));
  // Per-thread streams appeared in CUDA 7.0: before it, the legacy variant.
  CHECK(Lookup("cuStreamSynchronize", 6050, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &r, &status) ==
        dlsym(self, "cuStreamSynchronize"));
  // No per-thread variant of an event sync.
  CHECK(Lookup("cuEventSynchronize", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &r, &status) ==
        dlsym(self, "cuEventSynchronize"));
  CHECK(Lookup("cuCtxSynchronize", 12080, 0, &r, &status) == dlsym(self, "cuCtxSynchronize"));
  CHECK(Lookup("cuCtxSynchronize", 13000, 0, &r, &status) == dlsym(self, "cuCtxSynchronize_v2"));
  CHECK(Lookup("cuGetProcAddress", 11030, 0, &r, &status) == dlsym(self, "cuGetProcAddress"));
  CHECK(Lookup("cuGetProcAddress", 12000, 0, &r, &status) == dlsym(self, "cuGetProcAddress_v2"));
  CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
  // cuGetProcAddress before it existed (11.3).
  CHECK(Lookup("cuGetProcAddress", 11020, 0, &r, &status) == nullptr);
  CHECK(r == CUDA_SUCCESS);
  CHECK(status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  // An exported variant's own name is no base name.
  CHECK(Lookup("cuStreamSynchronize_ptsz", 13000, 0, &r, &status) == nullptr);
  CHECK(r == CUDA_ERROR_NOT_FOUND);
  dlclose(self);
}

// cudaGetDriverEntryPoint is deprecated in CUDA 13 and still exported: static runtimes call it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_CASE("cudaGetDriverEntryPoint(ByVersion)(_ptsz) ask the driver with the runtime's version", "[proc]") {
  void* self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(self != nullptr);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  CHECK(cudaGetDriverEntryPoint("cuCtxSynchronize", &fn, cudaEnableDefault, &status) == cudaSuccess);
  CHECK(fn == dlsym(self, "cuCtxSynchronize_v2"));  // the runtime is 13.0
  CHECK(status == cudaDriverEntryPointSuccess);
  CHECK(cudaGetDriverEntryPoint_ptsz("cuStreamSynchronize", &fn, cudaEnableDefault, &status) == cudaSuccess);
  CHECK(fn == dlsym(self, "cuStreamSynchronize_ptsz"));
  CHECK(cudaGetDriverEntryPoint_ptsz("cuStreamSynchronize", &fn, cudaEnableLegacyStream, &status) == cudaSuccess);
  CHECK(fn == dlsym(self, "cuStreamSynchronize"));
  CHECK(cudaGetDriverEntryPointByVersion("cuCtxSynchronize", &fn, 12000, cudaEnableDefault, &status) == cudaSuccess);
  CHECK(fn == dlsym(self, "cuCtxSynchronize"));
  CHECK(cudaGetDriverEntryPointByVersion_ptsz("cuStreamSynchronize", &fn, 12000, cudaEnableDefault, &status) ==
        cudaSuccess);
  CHECK(fn == dlsym(self, "cuStreamSynchronize_ptsz"));
  // Unknown: success, null, SymbolNotFound; too new a version: invalid, the last error set.
  CHECK(cudaGetDriverEntryPoint("cuNcclsimNoSuchFunction", &fn, cudaEnableDefault, &status) == cudaSuccess);
  CHECK(fn == nullptr);
  CHECK(status == cudaDriverEntryPointSymbolNotFound);
  CHECK(cudaGetDriverEntryPointByVersion("cuInit", &fn, 13010, cudaEnableDefault, &status) == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  dlclose(self);
}
#pragma GCC diagnostic pop
