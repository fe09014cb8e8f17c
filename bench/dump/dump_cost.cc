// Cost of one rank's hang dump against the number of threads in the process: the time to
// capture every thread's stack (CaptureProcessStacks), the time to write the dump
// (WriteDump: JSON + text, fsync'ed and renamed), and the size of both files.
//
// The extra threads sleep in a condition-variable wait, like a job's idle data-loader and
// communication threads. Each thread count is measured REPEATS times in a fresh set of
// threads; one line per measurement:
//
//   dump threads=<N> capture_ms=<x> write_ms=<y> json_bytes=<j> txt_bytes=<t>
//
// usage: bench_dump_cost [REPEATS [N...]]   (default: 5 repeats of 8 64 256 threads)
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/dump/stacks_to_dump.h"
#include "core/dump/dump_writer.h"
#include "core/dump/process_facts.h"
#include "core/settings/settings.h"
#include "core/stacks/process_stacks.h"

namespace {

using namespace ncclwatch;
using Clock = std::chrono::steady_clock;

// Read once, as the preload does (NCCLWATCH_STACK_TIMEOUT_MS and the other capture settings).
const settings::Settings& Settings() {
  static const settings::Settings read = settings::ReadSettings();
  return read;
}

// Threads parked on a condition variable until destruction.
class IdleThreads {
 public:
  explicit IdleThreads(int count) {
    for (int i = 0; i < count; ++i) threads_.emplace_back([this] { Park(); });
  }
  ~IdleThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  __attribute__((noinline)) void Park() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return released_; });
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  std::vector<std::thread> threads_;
};

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

long FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

bool MeasureOnce(int extra_threads, int repeat, const std::string& dir) {
  IdleThreads idle(extra_threads);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let them all park
  dump::RankDump rank_dump;
  rank_dump.incident.id = "bench" + std::to_string(extra_threads) + "-" + std::to_string(repeat);
  rank_dump.process.global_rank = 0;
  const Clock::time_point capture_start = Clock::now();
  ProcessStacks stacks = CaptureProcessStacks(settings::CaptureOptionsOf(Settings()));
  const double capture_ms = MsSince(capture_start);
  const Clock::time_point write_start = Clock::now();
  dump::FillProcessFacts(Settings().nccl_env, &rank_dump);
  dump::StampDetectionTime(&rank_dump.incident);
  bench::CopyStacksIntoDump(stacks, &rank_dump);
  const Result<dump::DumpFiles> result = dump::WriteDump(rank_dump, dir);
  const double write_ms = MsSince(write_start);
  if (!result.ok()) {
    std::fprintf(stderr, "bench_dump_cost: %s\n", result.error().message().c_str());
    return false;
  }
  std::printf("dump threads=%zu capture_ms=%.2f write_ms=%.2f json_bytes=%ld txt_bytes=%ld\n",
              stacks.threads.size(), capture_ms, write_ms, FileSize(result->json_path), FileSize(result->text_path));
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 5;
  std::vector<int> counts;
  for (int i = 2; i < argc; ++i) counts.push_back(std::atoi(argv[i]));
  if (counts.empty()) counts = {8, 64, 256};
  const std::string dir =
      std::filesystem::temp_directory_path() / ("ncclwatch-bench-dump-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const Status armed = ArmStackCapture(settings::CaptureOptionsOf(Settings()));
  if (!armed.ok()) std::fprintf(stderr, "bench_dump_cost: native capture degraded: %s\n", armed.message().c_str());
  bool ok = true;
  for (int total : counts) {
    // The main thread counts as one of the process's threads.
    for (int r = 0; r < repeats && ok; ++r) ok = MeasureOnce(total > 1 ? total - 1 : 0, r, dir);
  }
  std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
