#include <cuda.h>
#include <dlfcn.h>

#include <catch2/catch.hpp>

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
