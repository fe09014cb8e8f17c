#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

namespace {

// Exit code of the child: 0 when every call failed with cudaErrorInitializationError.
[[noreturn]] void ChildProbe() {
  alarm(10);  // bounded even if the runtime wrongly blocks on a parent-only worker
  int failures = 0;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaErrorInitializationError) ++failures;
  if (cudaStreamSynchronize(nullptr) != cudaErrorInitializationError) ++failures;
  if (cudaDeviceSynchronize() != cudaErrorInitializationError) ++failures;
  cudaStream_t s;
  if (cudaStreamCreate(&s) != cudaErrorInitializationError) ++failures;
  if (cudaGetLastError() != cudaErrorInitializationError) ++failures;
  _exit(failures);
}

}  // namespace

TEST_CASE("after fork the child's runtime is unusable", "[fork]") {
  cudaStream_t s;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  ncclsim_test::Gate gate;
  REQUIRE(cudaLaunchHostFunc(s, ncclsim_test::Gate::BlockOn, &gate) == cudaSuccess);  // a live worker

  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) ChildProbe();
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  gate.Open();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);

  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);  // the parent is unaffected
  cudaStreamDestroy(s);
}
