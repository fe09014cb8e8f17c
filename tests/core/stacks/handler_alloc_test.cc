// The sampler's signal handler allocates nothing, not even when it unwinds a thread for
// the first time. libunwind's unw_backtrace did: its per-thread cache is dynamic TLS of the
// dlopen'ed libunwind.so.8, which __tls_get_addr allocates with malloc on a thread's first
// access, and a job thread interrupted while holding the malloc lock would deadlock.
//
// malloc, calloc and realloc are interposed here (the loader's TLS allocations use them
// too) and counted per thread. Not built under sanitizers, whose runtimes own malloc; TSan
// reports signal-unsafe calls inside handlers by itself.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "core/stacks/native_sampler.h"
#include "core/stacks/process_stacks.h"
#include "environment_options.h"
#include "parked_threads.h"

extern "C" void* __libc_malloc(size_t size);
extern "C" void* __libc_calloc(size_t count, size_t size);
extern "C" void* __libc_realloc(void* pointer, size_t size);

namespace {
// Static TLS of the executable: reading it allocates nothing.
thread_local long t_allocations = 0;
}  // namespace

extern "C" void* malloc(size_t size) {
  ++t_allocations;
  return __libc_malloc(size);
}

extern "C" void* calloc(size_t count, size_t size) {
  ++t_allocations;
  return __libc_calloc(count, size);
}

extern "C" void* realloc(void* pointer, size_t size) {
  ++t_allocations;
  return __libc_realloc(pointer, size);
}

namespace ncclwatch {
namespace {

using testing::Park;
using testing::ParkedThreads;

TEST_CASE("the interposed malloc counts this thread's allocations", "[native]") {
  const long before = t_allocations;
  std::vector<char> buffer(4096);
  buffer[0] = 1;
  CHECK(t_allocations > before);
}

TEST_CASE("the handler allocates nothing on a thread's first capture", "[native]") {
  // Loads and warms up the unwinder (NCCLWATCH_STACK_UNWINDER picks it) on this thread only.
  REQUIRE(ArmStackCapture(testing::EnvironmentOptions()).ok());
  CHECK(std::string(stacks_internal::NativeUnwinderName()) ==
        (testing::EnvironmentOptions().backtrace_unwinder ? "backtrace" : "libunwind"));
  std::atomic<long> in_park{-1};
  std::vector<stacks_internal::RawThreadStack> sampled;
  {
    ParkedThreads threads;
    const pid_t fresh = threads.Start("stk-fresh", [&](Park& park) {
      const long before = t_allocations;
      park.Wait();  // a futex wait: allocates nothing itself
      in_park.store(t_allocations - before);
    });
    REQUIRE(threads.AwaitParked(1));
    stacks_internal::SampleOptions options;
    options.timeout = std::chrono::seconds(5);
    std::vector<std::string> errors;
    sampled = stacks_internal::SampleThreads({fresh}, options, &errors);
    CHECK(errors.empty());
  }  // releases and joins the thread
  REQUIRE(sampled.size() == 1);
  CHECK(sampled[0].answered);
  CHECK(sampled[0].pcs.size() > 2);
  CHECK(in_park.load() == 0);
}

}  // namespace
}  // namespace ncclwatch
