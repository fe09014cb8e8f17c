#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "test_support.h"

using ncclsim_test::Gate;
using ncclsim_test::SetFlag;

namespace {

struct Appender {
  std::vector<int>* out;
  int value;
};
void Append(void* arg) {
  auto* a = static_cast<Appender*>(arg);
  a->out->push_back(a->value);
}

}  // namespace

TEST_CASE("work on a stream runs in enqueue order", "[stream]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  std::vector<int> seen;
  std::vector<Appender> items;
  for (int i = 0; i < 100; ++i) items.push_back({&seen, i});
  for (auto& item : items) REQUIRE(cudaLaunchHostFunc(s, Append, &item) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  REQUIRE(seen.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(seen[i] == i);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("a blocked host function stalls only its own stream", "[stream]") {
  cudaStream_t stuck, free_stream;
  REQUIRE(cudaStreamCreate(&stuck) == cudaSuccess);
  REQUIRE(cudaStreamCreate(&free_stream) == cudaSuccess);
  Gate gate;
  std::atomic<bool> after_gate{false}, other_ran{false};
  REQUIRE(cudaLaunchHostFunc(stuck, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(stuck, SetFlag, &after_gate) == cudaSuccess);
  cudaEvent_t event;
  REQUIRE(cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(cudaEventRecord(event, stuck) == cudaSuccess);

  REQUIRE(cudaLaunchHostFunc(free_stream, SetFlag, &other_ran) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(free_stream) == cudaSuccess);
  CHECK(other_ran.load());

  cudaError_t query_from_other_thread = cudaSuccess, event_from_other_thread = cudaSuccess;
  std::thread poller([&] {
    query_from_other_thread = cudaStreamQuery(stuck);
    event_from_other_thread = cudaEventQuery(event);
    cudaGetLastError();
  });
  poller.join();
  CHECK(query_from_other_thread == cudaErrorNotReady);
  CHECK(event_from_other_thread == cudaErrorNotReady);
  CHECK_FALSE(after_gate.load());

  gate.Open();
  REQUIRE(cudaStreamSynchronize(stuck) == cudaSuccess);
  CHECK(after_gate.load());
  CHECK(cudaStreamQuery(stuck) == cudaSuccess);
  CHECK(cudaEventQuery(event) == cudaSuccess);
  cudaEventDestroy(event);
  cudaStreamDestroy(stuck);
  cudaStreamDestroy(free_stream);
}

TEST_CASE("an async copy waits for earlier work on its stream", "[stream][memory]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  int src = 42, dst = 0;
  Gate gate;
  REQUIRE(cudaLaunchHostFunc(s, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(&dst, &src, sizeof(int), cudaMemcpyHostToHost, s) == cudaSuccess);
  CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
  CHECK(dst == 0);
  gate.Open();
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(dst == 42);
  cudaGetLastError();
  cudaStreamDestroy(s);
}

TEST_CASE("destroying a stream lets its pending work finish", "[stream]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  Gate gate, done;
  REQUIRE(cudaLaunchHostFunc(s, Gate::BlockOn, &gate) == cudaSuccess);
  REQUIRE(cudaLaunchHostFunc(s, [](void* d) { static_cast<Gate*>(d)->Open(); }, &done) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaStreamQuery(s) == cudaErrorInvalidResourceHandle);
  gate.Open();
  done.Wait();  // returns only if the item after the gate still ran
  cudaGetLastError();
}

TEST_CASE("stream attributes and handles", "[stream]") {
  REQUIRE(cudaSetDevice(2) == cudaSuccess);
  cudaStream_t s;
  REQUIRE(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -1) == cudaSuccess);
  unsigned flags = 0;
  int device = -1, priority = 0;
  CHECK(cudaStreamGetFlags(s, &flags) == cudaSuccess);
  CHECK(flags == cudaStreamNonBlocking);
  CHECK(cudaStreamGetDevice(s, &device) == cudaSuccess);
  CHECK(device == 2);
  CHECK(cudaStreamGetPriority(s, &priority) == cudaSuccess);
  CHECK(priority == -1);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  CHECK(cudaStreamGetDevice(s, &device) == cudaSuccess);
  CHECK(device == 2);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(cudaStreamDestroy(s) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(0x1234)) == cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamCreateWithFlags(&s, 0x80) == cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_CASE("kernel launches are stream-ordered no-ops", "[stream]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  Gate gate;
  REQUIRE(cudaLaunchHostFunc(s, Gate::BlockOn, &gate) == cudaSuccess);
  void* args[1] = {nullptr};
  REQUIRE(cudaLaunchKernel(reinterpret_cast<const void*>(&SetFlag), dim3(1), dim3(1), args, 0, s) == cudaSuccess);
  cudaEvent_t event;
  REQUIRE(cudaEventCreate(&event) == cudaSuccess);
  REQUIRE(cudaEventRecord(event, s) == cudaSuccess);
  CHECK(cudaEventQuery(event) == cudaErrorNotReady);
  gate.Open();
  REQUIRE(cudaEventSynchronize(event) == cudaSuccess);
  CHECK(cudaEventQuery(event) == cudaSuccess);
  cudaGetLastError();
  cudaEventDestroy(event);
  cudaStreamDestroy(s);
}
