// The driver bridge (sim/cudart/driver_bridge.h) works on the runtime's own streams and events and
// never touches the calling thread's last error, a pending cudaErrorNotReady included.
#include "sim/cudart/driver_bridge.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

namespace {

// A host function that holds its stream until released.
struct Gate {
  std::atomic<bool> open{false};
  static void Wait(void* self) {
    auto* gate = static_cast<Gate*>(self);
    while (!gate->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
};

}  // namespace

TEST_CASE("bridge calls leave a pending cudaErrorNotReady exactly as it was", "[bridge]") {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  Gate gate;
  REQUIRE(cudaLaunchHostFunc(stream, &Gate::Wait, &gate) == cudaSuccess);
  REQUIRE(cudaStreamQuery(stream) == cudaErrorNotReady);  // the job's own poll leaves NotReady pending
  REQUIRE(cudaPeekAtLastError() == cudaErrorNotReady);

  cudaEvent_t event = nullptr;
  CHECK(ncclsim_rt_event_create(&event, cudaEventDisableTiming) == cudaSuccess);
  CHECK(ncclsim_rt_event_record(event, stream, 0) == cudaSuccess);
  CHECK(ncclsim_rt_event_query(event) == cudaErrorNotReady);
  CHECK(ncclsim_rt_stream_query(stream) == cudaErrorNotReady);
  CHECK(ncclsim_rt_event_query(nullptr) == cudaErrorInvalidResourceHandle);  // a failure is not recorded either
  CHECK(cudaPeekAtLastError() == cudaErrorNotReady);

  gate.open = true;
  CHECK(ncclsim_rt_event_synchronize(event) == cudaSuccess);
  CHECK(ncclsim_rt_event_query(event) == cudaSuccess);
  CHECK(cudaGetLastError() == cudaErrorNotReady);  // still the job's, and only now cleared
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(ncclsim_rt_event_destroy(event) == cudaSuccess);
  CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("bridge calls on success leave a clear last error clear", "[bridge]") {
  REQUIRE(cudaGetLastError() == cudaSuccess);
  cudaStream_t stream = nullptr;
  CHECK(ncclsim_rt_stream_create(&stream, cudaStreamNonBlocking, 0) == cudaSuccess);
  unsigned flags = 0;
  CHECK(ncclsim_rt_stream_flags(stream, &flags) == cudaSuccess);
  CHECK(flags == cudaStreamNonBlocking);
  CHECK(ncclsim_rt_stream_wait_event(stream, nullptr, 0) == cudaErrorInvalidResourceHandle);
  CHECK(cudaPeekAtLastError() == cudaSuccess);
  CHECK(ncclsim_rt_launch_noop(stream) == cudaSuccess);
  CHECK(ncclsim_rt_stream_synchronize(stream) == cudaSuccess);
  CHECK(ncclsim_rt_stream_destroy(stream) == cudaSuccess);
}

TEST_CASE("bridge allocations are the runtime's", "[bridge]") {
  void* p = nullptr;
  REQUIRE(ncclsim_rt_malloc(&p, 4096) == cudaSuccess);
  void* base = nullptr;
  size_t size = 0;
  int device = -2;
  int type = 0;
  CHECK(ncclsim_rt_find_allocation(static_cast<char*>(p) + 100, &base, &size, &device, &type) == 1);
  CHECK(base == p);
  CHECK(size >= 4096);
  CHECK(device == ncclsim_rt_current_device());
  CHECK(type == cudaMemoryTypeDevice);
  cudaPointerAttributes attr{};
  CHECK(cudaPointerGetAttributes(&attr, p) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeDevice);
  CHECK(ncclsim_rt_free(p) == cudaSuccess);
  CHECK(ncclsim_rt_find_allocation(p, nullptr, nullptr, nullptr, nullptr) == 0);
  CHECK(ncclsim_rt_free(p) == cudaErrorInvalidValue);
  CHECK(cudaPeekAtLastError() == cudaSuccess);
}
