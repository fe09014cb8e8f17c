#include <cuda.h>
#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "test_support.h"

using ncclsim_test::Gate;

TEST_CASE("cuEventRecord/cuEventQuery leave the runtime's pending last error exactly as it was", "[event]") {
  cudaStream_t stream;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  Gate gate;
  REQUIRE(cudaLaunchHostFunc(stream, Gate::BlockOn, &gate) == cudaSuccess);
  // The job's own poll leaves cudaErrorNotReady pending on this thread.
  REQUIRE(cudaStreamQuery(stream) == cudaErrorNotReady);
  REQUIRE(cudaPeekAtLastError() == cudaErrorNotReady);

  // The watcher records and polls through the driver: its NOT_READY must not touch the runtime.
  CUevent event;
  REQUIRE(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS);
  REQUIRE(cuEventRecord(event, stream) == CUDA_SUCCESS);
  CHECK(cuEventQuery(event) == CUDA_ERROR_NOT_READY);
  CHECK(cuStreamQuery(stream) == CUDA_ERROR_NOT_READY);
  CHECK(cudaPeekAtLastError() == cudaErrorNotReady);

  // A different pending error shows that the driver does not write NotReady over it either.
  REQUIRE(cudaSetDevice(999) == cudaErrorInvalidDevice);
  CHECK(cuEventQuery(event) == CUDA_ERROR_NOT_READY);
  CHECK(cuEventQuery(reinterpret_cast<CUevent>(&gate)) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);

  gate.Open();
  REQUIRE(cuEventSynchronize(event) == CUDA_SUCCESS);
  CHECK(cuEventQuery(event) == CUDA_SUCCESS);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
  cudaGetLastError();
  REQUIRE(cuEventDestroy(event) == CUDA_SUCCESS);
  CHECK(cuEventQuery(event) == CUDA_ERROR_INVALID_HANDLE);
  cudaStreamDestroy(stream);
}

TEST_CASE("driver streams are runtime streams", "[stream]") {
  CUstream stream;
  REQUIRE(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  unsigned flags = 0;
  REQUIRE(cudaStreamGetFlags(stream, &flags) == cudaSuccess);  // the runtime knows the handle
  CHECK(flags == cudaStreamNonBlocking);
  Gate gate;
  REQUIRE(cudaLaunchHostFunc(stream, Gate::BlockOn, &gate) == cudaSuccess);
  CHECK(cuStreamQuery(stream) == CUDA_ERROR_NOT_READY);
  CUcontext ctx = nullptr;
  REQUIRE(cuStreamGetCtx(stream, &ctx) == CUDA_SUCCESS);
  CUdevice dev = -1;
  REQUIRE(cuStreamGetDevice(stream, &dev) == CUDA_SUCCESS);
  CHECK(dev == 0);
  CUcontext primary = nullptr;
  REQUIRE(cuDevicePrimaryCtxRetain(&primary, 0) == CUDA_SUCCESS);
  CHECK(ctx == primary);
  cuDevicePrimaryCtxRelease(0);
  gate.Open();
  REQUIRE(cuStreamSynchronize(stream) == CUDA_SUCCESS);
  CHECK(cuStreamQuery(stream) == CUDA_SUCCESS);
  REQUIRE(cuStreamDestroy(stream) == CUDA_SUCCESS);
  CHECK(cuStreamCreate(&stream, 0x8) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuStreamWaitEvent orders one stream after another; elapsed time spans the wait", "[stream]") {
  CUstream a, b;
  REQUIRE(cuStreamCreate(&a, 0) == CUDA_SUCCESS);
  REQUIRE(cuStreamCreate(&b, 0) == CUDA_SUCCESS);
  CUevent start, done;
  REQUIRE(cuEventCreate(&start, CU_EVENT_DEFAULT) == CUDA_SUCCESS);
  REQUIRE(cuEventCreate(&done, CU_EVENT_DEFAULT) == CUDA_SUCCESS);
  Gate gate;
  REQUIRE(cuEventRecord(start, a) == CUDA_SUCCESS);
  REQUIRE(cudaLaunchHostFunc(a, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cuEventRecord(done, a) == CUDA_SUCCESS);
  REQUIRE(cuStreamWaitEvent(b, done, 0) == CUDA_SUCCESS);
  std::atomic<bool> ran{false};
  REQUIRE(cudaLaunchHostFunc(b, ncclsim_test::SetFlag, &ran) == cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(ran.load());
  gate.Open();
  REQUIRE(cuStreamSynchronize(b) == CUDA_SUCCESS);
  CHECK(ran.load());
  float ms = -1;
  REQUIRE(cuEventElapsedTime(&ms, start, done) == CUDA_SUCCESS);
  CHECK(ms >= 20.0f);
  cuEventDestroy(start);
  cuEventDestroy(done);
  cuStreamDestroy(a);
  cuStreamDestroy(b);
}

TEST_CASE("cuStreamWaitValue32 holds its stream until cuStreamWriteValue32 on another", "[memops]") {
  CUstream waiter, writer;
  REQUIRE(cuStreamCreate(&waiter, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  REQUIRE(cuStreamCreate(&writer, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  CUdeviceptr flag = 0;
  REQUIRE(cuMemAlloc(&flag, 8) == CUDA_SUCCESS);
  REQUIRE(cuMemsetD32(flag, 0, 2) == CUDA_SUCCESS);
  REQUIRE(cuStreamWaitValue32(waiter, flag, 7, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS);
  CUevent after_wait;
  REQUIRE(cuEventCreate(&after_wait, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS);
  REQUIRE(cuEventRecord(after_wait, waiter) == CUDA_SUCCESS);

  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  CHECK(cuEventQuery(after_wait) == CUDA_ERROR_NOT_READY);
  Gate gate;  // the write itself waits in its own stream's order
  REQUIRE(cudaLaunchHostFunc(writer, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cuStreamWriteValue32(writer, flag, 7, CU_STREAM_WRITE_VALUE_DEFAULT) == CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(cuEventQuery(after_wait) == CUDA_ERROR_NOT_READY);
  gate.Open();
  REQUIRE(cuEventSynchronize(after_wait) == CUDA_SUCCESS);
  CHECK(*reinterpret_cast<uint32_t*>(flag) == 7);

  // 64-bit and EQ: a second round on the next word.
  REQUIRE(cuStreamWaitValue64(waiter, flag, 0x100000002ull, CU_STREAM_WAIT_VALUE_EQ) == CUDA_SUCCESS);
  REQUIRE(cuEventRecord(after_wait, waiter) == CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(cuEventQuery(after_wait) == CUDA_ERROR_NOT_READY);
  REQUIRE(cuStreamWriteValue64(writer, flag, 0x100000002ull, 0) == CUDA_SUCCESS);
  REQUIRE(cuEventSynchronize(after_wait) == CUDA_SUCCESS);

  CHECK(cuStreamWaitValue32(waiter, flag + 1, 1, 0) == CUDA_ERROR_INVALID_VALUE);  // misaligned
  CHECK(cuStreamWaitValue32(waiter, flag, 1, 0x40) == CUDA_ERROR_INVALID_VALUE);   // unknown flag
  cuEventDestroy(after_wait);
  cuStreamDestroy(waiter);
  cuStreamDestroy(writer);
  cuMemFree(flag);
}

TEST_CASE("cuStreamBatchMemOp runs its operations in order on the stream", "[memops]") {
  CUstream s;
  REQUIRE(cuStreamCreate(&s, 0) == CUDA_SUCCESS);
  CUdeviceptr words = 0;
  REQUIRE(cuMemAlloc(&words, 16) == CUDA_SUCCESS);
  CUstreamBatchMemOpParams ops[2] = {};
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = words;
  ops[0].writeValue.value = 11;
  ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[1].writeValue.address = words + 8;
  ops[1].writeValue.value64 = 1ull << 40;
  REQUIRE(cuStreamBatchMemOp(s, 2, ops, 0) == CUDA_SUCCESS);
  REQUIRE(cuStreamSynchronize(s) == CUDA_SUCCESS);
  CHECK(*reinterpret_cast<uint32_t*>(words) == 11);
  CHECK(*reinterpret_cast<uint64_t*>(words + 8) == (1ull << 40));
  ops[0].operation = static_cast<CUstreamBatchMemOpType>(77);
  CHECK(cuStreamBatchMemOp(s, 2, ops, 0) == CUDA_ERROR_INVALID_VALUE);
  cuMemFree(words);
  cuStreamDestroy(s);
}

TEST_CASE("cuStreamIsCapturing sees the runtime's captures and leaves its last error alone", "[stream]") {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
  CHECK(cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS);
  CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  CHECK(cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS);
  CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(cuStreamIsCapturing(stream, nullptr) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuStreamIsCapturing(reinterpret_cast<CUstream>(0x1234), &status) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}
