// Under LD_PRELOAD in a process without NCCL or the CUDA runtime, the hooks are still
// reachable through the dynamic linker (weak references bind to the preload's exports),
// though dlsym shows no NCCL function (there is none). Calling them must return the API's
// error code, log once per function, and never call through a NULL pointer.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using NcclAllReduce = int (*)(const void*, void*, size_t, int, int, void*, void*);
using CudaStreamSync = int (*)(void*);

extern "C" int ncclAllReduce(const void*, void*, size_t, int, int, void*, void*) __attribute__((weak));
extern "C" int cudaStreamSynchronize(void*) __attribute__((weak));

int Fail(const char* why) {
  std::fprintf(stdout, "FAIL: %s\n", why);
  return 1;
}

}  // namespace

int main() {
  NcclAllReduce all_reduce = &ncclAllReduce;
  CudaStreamSync stream_sync = &cudaStreamSynchronize;
  if (all_reduce == nullptr || stream_sync == nullptr) return Fail("not running under the preload");
  if (dlsym(RTLD_DEFAULT, "ncclAllReduce") != nullptr) return Fail("dlsym shows an NCCL function with no NCCL loaded");
  if (dlsym(RTLD_DEFAULT, "pncclAllReduce") != nullptr) return Fail("a real NCCL is loaded");
  // Capture the preload's log to count its warnings.
  char path[] = "/tmp/ncclwatch-missing-XXXXXX";
  const int log_fd = mkstemp(path);
  if (log_fd < 0) return Fail("mkstemp");
  unlink(path);
  const int saved_stderr = dup(2);
  dup2(log_fd, 2);
  const int first = all_reduce(nullptr, nullptr, 1, 7, 0, nullptr, nullptr);
  const int second = all_reduce(nullptr, nullptr, 1, 7, 0, nullptr, nullptr);
  const int sync = stream_sync(nullptr);
  dup2(saved_stderr, 2);
  std::string log;
  char buf[4096];
  lseek(log_fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(log_fd, buf, sizeof(buf))) > 0;) log.append(buf, n);
  if (first != 2 || second != 2) return Fail("ncclAllReduce did not return ncclSystemError");
  if (sync != 302) return Fail("cudaStreamSynchronize did not return cudaErrorSharedObjectSymbolNotFound");
  size_t count = 0;
  for (size_t at = 0; (at = log.find("cannot find the real ncclAllReduce", at)) != std::string::npos; ++at) ++count;
  if (count != 1) return Fail(("expected one warning for ncclAllReduce, log was: " + log).c_str());
  std::printf("ok\n");
  return 0;
}
