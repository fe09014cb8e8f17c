#include <cuda.h>
#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <string>

#include "test_support.h"

using ncclsim_test::Gate;

TEST_CASE("modules hand out functions whose attributes can be read and set", "[module]") {
  const char image[] = "not really a cubin";
  CUmodule module = nullptr;
  REQUIRE(cuModuleLoadData(&module, image) == CUDA_SUCCESS);
  CUfunction f = nullptr, again = nullptr;
  REQUIRE(cuModuleGetFunction(&f, module, "gemm") == CUDA_SUCCESS);
  REQUIRE(cuModuleGetFunction(&again, module, "gemm") == CUDA_SUCCESS);
  CHECK(f == again);
  int v = 0;
  REQUIRE(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f) == CUDA_SUCCESS);
  CHECK(v == 1024);
  REQUIRE(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200 << 10) == CUDA_SUCCESS);
  REQUIRE(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS);
  CHECK(v == (200 << 10));
  CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS, 1) == CUDA_ERROR_INVALID_VALUE);  // read-only
  CHECK(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_SHARED) == CUDA_SUCCESS);
  int blocks = 0;
  REQUIRE(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 256, 0) == CUDA_SUCCESS);
  CHECK(blocks == 8);  // 2048 threads per SM / 256
  CUdeviceptr global = 0;
  size_t bytes = 0;
  CHECK(cuModuleGetGlobal(&global, &bytes, module, "table") == CUDA_ERROR_NOT_FOUND);
  REQUIRE(cuModuleUnload(module) == CUDA_SUCCESS);
  CHECK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuModuleUnload(module) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuModuleLoad(&module, "/nonexistent/kernels.cubin") == CUDA_ERROR_FILE_NOT_FOUND);
}

TEST_CASE("a kernel launch is a no-op that keeps its place in the stream", "[launch]") {
  CUmodule module = nullptr;
  REQUIRE(cuModuleLoadData(&module, "x") == CUDA_SUCCESS);
  CUfunction f = nullptr;
  REQUIRE(cuModuleGetFunction(&f, module, "k") == CUDA_SUCCESS);
  CUstream s;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  Gate gate;
  REQUIRE(cudaLaunchHostFunc(s, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cuLaunchKernel(f, 132, 1, 1, 256, 1, 1, 0, s, nullptr, nullptr) == CUDA_SUCCESS);
  CUevent after;
  REQUIRE(cuEventCreate(&after, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS);
  REQUIRE(cuEventRecord(after, s) == CUDA_SUCCESS);
  CHECK(cuEventQuery(after) == CUDA_ERROR_NOT_READY);
  gate.Open();
  REQUIRE(cuEventSynchronize(after) == CUDA_SUCCESS);

  CHECK(cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, s, nullptr, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(&gate), 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr) ==
        CUDA_ERROR_INVALID_HANDLE);
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 128;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = s;
  CHECK(cuLaunchKernelEx(&config, f, nullptr, nullptr) == CUDA_SUCCESS);
  CHECK(cuLaunchCooperativeKernel(f, 2, 1, 1, 64, 1, 1, 0, s, nullptr) == CUDA_SUCCESS);
  CHECK(cuStreamSynchronize(s) == CUDA_SUCCESS);
  cuEventDestroy(after);
  cuStreamDestroy(s);
  cuModuleUnload(module);
}

TEST_CASE("libraries, kernels and the linker hand out usable handles", "[module]") {
  CUlibrary library = nullptr;
  REQUIRE(cuLibraryLoadData(&library, "fatbin", nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
  CUkernel kernel = nullptr;
  REQUIRE(cuLibraryGetKernel(&kernel, library, "attention") == CUDA_SUCCESS);
  CUfunction f = nullptr;
  REQUIRE(cuKernelGetFunction(&f, kernel) == CUDA_SUCCESS);
  const char* name = nullptr;
  REQUIRE(cuFuncGetName(&name, f) == CUDA_SUCCESS);
  CHECK(std::string(name) == "attention");
  int v = 0;
  REQUIRE(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kernel, 0) == CUDA_SUCCESS);
  CHECK(v == 1024);
  // CUDA 12 accepts a CUkernel where a CUfunction is expected.
  CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr) ==
        CUDA_SUCCESS);
  REQUIRE(cuLibraryUnload(library) == CUDA_SUCCESS);
  CHECK(cuKernelGetFunction(&f, kernel) == CUDA_ERROR_INVALID_HANDLE);

  CUlinkState link = nullptr;
  REQUIRE(cuLinkCreate(0, nullptr, nullptr, &link) == CUDA_SUCCESS);
  char ptx[] = ".version 8.0";
  REQUIRE(cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx, sizeof(ptx), "a.ptx", 0, nullptr, nullptr) == CUDA_SUCCESS);
  void* cubin = nullptr;
  size_t size = 0;
  REQUIRE(cuLinkComplete(link, &cubin, &size) == CUDA_SUCCESS);
  CHECK(cubin != nullptr);
  CHECK(size == sizeof(ptx));
  CUmodule module = nullptr;
  REQUIRE(cuModuleLoadData(&module, cubin) == CUDA_SUCCESS);
  REQUIRE(cuLinkDestroy(link) == CUDA_SUCCESS);
  CHECK(cuModuleUnload(module) == CUDA_SUCCESS);
}

TEST_CASE("cuTensorMapEncodeTiled accepts a valid 2-D map and refuses a bad one", "[launch]") {
  alignas(16) static float matrix[64 * 64];
  CUtensorMap map;
  const cuuint64_t dims[2] = {64, 64};
  const cuuint64_t strides[1] = {64 * sizeof(float)};
  const cuuint32_t box[2] = {32, 32};
  const cuuint32_t element_strides[2] = {1, 1};
  CHECK(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, matrix, dims, strides, box, element_strides,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS);
  const cuuint32_t big_box[2] = {512, 32};
  CHECK(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, matrix, dims, strides, big_box,
                               element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_ERROR_INVALID_VALUE);
}
