// Loads rtld_local_shim with RTLD_LOCAL (as Python loads extension modules), runs one
// rank through it under the preload, and checks what this process published.
// Exit 0 when the hooks found the real NCCL and published seq 1..2 with completions.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/shm/reader.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* shim = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (shim == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  if (dlsym(RTLD_DEFAULT, "pncclAllReduce") != nullptr) {
    std::fprintf(stderr, "NCCL is in the global scope; the test would prove nothing\n");
    return 2;
  }
  auto* run = reinterpret_cast<int (*)()>(dlsym(shim, "shim_run_one_rank"));
  const int rc = run();
  if (rc != 0) {
    std::fprintf(stderr, "shim failed at step %d\n", rc);
    return 1;
  }
  const char* job = std::getenv("NCCLWATCH_JOB_ID");
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const auto snap = ncclwatch::shm::ReadJobSnapshot(job == nullptr ? "" : job);
    for (const auto& p : snap.processes) {
      if (p.pid != getpid() || p.comms.size() != 1) continue;
      const auto& c = p.comms[0];
      if (c.last_enqueued_seq == 2 && c.last_completed_seq == 2) {
        std::printf("published seq 2, completed 2\n");
        return 0;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "nothing (complete) was published\n");
  return 1;
}
