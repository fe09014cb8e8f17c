// Live stamps against CLOCK_MONOTONIC: on every CPU this process may use, across sleeps and
// migrations, while a thread refreshes the calibration as the tracker does.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/clock/instant.h"
#include "core/clock/monotonic.h"
#include "core/clock/stamp_clock.h"

namespace ncclwatch::clock {
namespace {

// How far a stamp may sit outside the CLOCK_MONOTONIC reads around it: the line's error
// between refreshes (under 0.3 ppm once its baseline passed 100 ms, times a refresh delayed
// up to a second on a loaded machine) and the pair's jitter, with room to spare. The coarse
// clock, on a 1-4 ms grid, misses it by a thousand times.
constexpr int64_t kToleranceNs = 5'000;

std::string FileText(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool TscTrustedOnThisMachine() {
  std::istringstream cpuinfo(FileText("/proc/cpuinfo"));
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      return TscTrustedBy(line, FileText("/sys/devices/system/clocksource/clocksource0/current_clocksource"));
    }
  }
  return false;
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

bool PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// The tracker's part: a refresh at every wake (5 ms here, 25-100 ms in the tracker).
class Refresher {
 public:
  Refresher() : thread_([this] {
      while (!stop_.load()) {
        RefreshStampClock();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }) {}
  ~Refresher() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct Outside {
  int64_t worst_ns = 0;  // furthest a stamp fell outside the CLOCK_MONOTONIC reads around it
  bool increasing = true;
  uint64_t last = 0;
};

void StampBetweenReads(int count, Outside* out) {
  for (int i = 0; i < count; ++i) {
    const uint64_t before = MonotonicNowNs();
    const uint64_t stamp = StampNowNs();
    const uint64_t after = MonotonicNowNs();
    if (stamp < before) out->worst_ns = std::max<int64_t>(out->worst_ns, static_cast<int64_t>(before - stamp));
    if (stamp > after) out->worst_ns = std::max<int64_t>(out->worst_ns, static_cast<int64_t>(stamp - after));
    if (stamp <= out->last) out->increasing = false;
    out->last = stamp;
  }
}

TEST_CASE("stamps agree with CLOCK_MONOTONIC on every CPU, across sleeps and migrations") {
  StartStampClock();
  const Refresher refresher;
  if (TscTrustedOnThisMachine()) {
    // The first line comes 10 ms after the first pair; its rate settles over the next 100 ms.
    const uint64_t deadline = MonotonicNowNs() + 2'000'000'000ull;
    while (CurrentStampClock().source != StampSource::kTsc && MonotonicNowNs() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE(CurrentStampClock().source == StampSource::kTsc);
    CHECK(CurrentStampClock().tsc_ghz > 0.05);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } else {
    WARN("the TSC is not trusted here: stamps read CLOCK_MONOTONIC");
  }

  const std::vector<int> cpus = AllowedCpus();
  REQUIRE(!cpus.empty());
  std::vector<Outside> results(cpus.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < cpus.size(); ++i) {
    threads.emplace_back([&, i] {
      Outside& out = results[i];
      for (size_t round = 0; round < 2 * cpus.size(); ++round) {
        // Each thread visits every CPU in turn, from a different one: a migration each round.
        const bool pinned = PinTo(cpus[(i + round) % cpus.size()]);
        if (!pinned) out.increasing = false;
        StampBetweenReads(20'000, &out);
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < cpus.size(); ++i) {
    INFO("thread starting on CPU " << cpus[i]);
    CHECK(results[i].increasing);
    CHECK(results[i].worst_ns <= kToleranceNs);
  }
}

TEST_CASE("stamps resolve a microsecond") {
  StartStampClock();
  const Refresher refresher;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // Two stamps 1 us apart by CLOCK_MONOTONIC are 1 us apart (a coarse clock's would mostly be
  // equal: ticks are 1-4 ms).
  int resolved = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t a = StampNowNs();
    const uint64_t start = MonotonicNowNs();
    while (MonotonicNowNs() - start < 1'000) {
    }
    const uint64_t b = StampNowNs();
    if (b > a && b - a >= 900 && b - a < 1'000'000) ++resolved;
  }
  // A preemption between the reads may stretch a few.
  CHECK(resolved >= 90);
}

TEST_CASE("an instant's ISO form") {
  CHECK(FormatIso8601Utc(1'700'000'000'123'456'789ull) == "2023-11-14T22:13:20.123456789Z");
  const Instant now = NowInstant();
  CHECK(now.iso == FormatIso8601Utc(now.unix_ns));
  CHECK(now.mono_ns <= MonotonicNowNs());
}

}  // namespace
}  // namespace ncclwatch::clock
