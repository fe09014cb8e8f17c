#include "core/clock/stamp_clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace ncclwatch::clock {
namespace stamp_clock_detail {
PublishedLine published;
}  // namespace stamp_clock_detail

namespace {

// How often a refresh asks the kernel again which clocksource it uses: a file read, about
// 10 us, so every 10 s and not at every wake.
constexpr uint64_t kClocksourceRecheckNs = 10 * kNsPerSecond;
constexpr const char* kClocksourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

// The calibration's own state: written by StartStampClock before the tracker thread exists,
// then by that thread alone.
struct Calibration {
  std::atomic<bool> started{false};
  bool trusted = false;
  ClockPair first;
  TscLine current;
  uint64_t clocksource_checked_ns = 0;
};
Calibration calibration;

// Up to `size - 1` bytes of a file, NUL-terminated; raw system calls, no allocation.
size_t ReadHead(const char* path, char* buffer, size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t length = 0;
  while (length + 1 < size) {
    const ssize_t n = read(fd, buffer + length, size - 1 - length);
    if (n <= 0) break;
    length += static_cast<size_t>(n);
  }
  close(fd);
  buffer[length] = '\0';
  return length;
}

std::string_view FirstFlagsLine(std::string_view cpuinfo) {
  for (size_t at = 0; at < cpuinfo.size();) {
    const size_t end = std::min(cpuinfo.find('\n', at), cpuinfo.size());
    const std::string_view line = cpuinfo.substr(at, end - at);
    if (line.substr(0, 5) == "flags") return line;
    at = end + 1;
  }
  return {};
}

bool ClocksourceIsTsc(std::string_view clocksource) {
  while (!clocksource.empty() && (clocksource.back() == '\n' || clocksource.back() == ' ')) {
    clocksource.remove_suffix(1);
  }
  return clocksource == "tsc";
}

bool KernelClocksourceIsTsc() {
  char source[64];
  ReadHead(kClocksourcePath, source, sizeof(source));
  return ClocksourceIsTsc(source);
}

bool TscTrustedHere() {
#if defined(__x86_64__)
  // The first CPU's flags come within the first few KB of /proc/cpuinfo.
  static char cpuinfo[16384];
  const size_t length = ReadHead("/proc/cpuinfo", cpuinfo, sizeof(cpuinfo));
  char source[64];
  ReadHead(kClocksourcePath, source, sizeof(source));
  return TscTrustedBy(FirstFlagsLine(std::string_view(cpuinfo, length)), source);
#else
  return false;
#endif
}

#if defined(__x86_64__)
// A pair whose clock read took longer than this many ticks (40 us at 2.6 GHz) was
// interrupted: no refresh from it. Undisturbed, one takes 50-150 ticks here.
constexpr uint64_t kMaxPairTicks = 100'000;

// The tightest of four (TSC, CLOCK_MONOTONIC) reads: the TSC read before and after the
// clock (fenced, so neither moves across it), their midpoint paired with the clock. False
// when all four were interrupted.
bool ReadPair(ClockPair* pair) {
  ClockPair best;
  uint64_t best_width = ~uint64_t{0};
  for (int i = 0; i < 4; ++i) {
    _mm_lfence();
    const uint64_t before = __rdtsc();
    _mm_lfence();
    const uint64_t ns = MonotonicNowNs();
    _mm_lfence();
    const uint64_t after = __rdtsc();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  if (best_width > kMaxPairTicks) return false;
  *pair = best;
  return true;
}
#endif

void Publish(const TscLine& line) {
  using stamp_clock_detail::published;
  const uint64_t generation = published.generation.load(std::memory_order_relaxed);
  auto& slot = published.slots[(generation + 1) & 1];
  // Readers still on the slot about to change (the generation before last) must see the
  // generation move if they see any of the writes below: the fence orders it before them.
  std::atomic_thread_fence(std::memory_order_release);
  slot.base_tsc.store(line.base_tsc, std::memory_order_relaxed);
  slot.base_ns.store(line.base_ns, std::memory_order_relaxed);
  slot.mult.store(line.mult, std::memory_order_relaxed);
  published.generation.store(generation + 1, std::memory_order_release);
}

void Distrust() {
  calibration.trusted = false;
  calibration.current = {};
  Publish({});
}

}  // namespace

LineUpdate NextLine(const TscLine& current, const ClockPair& first, const ClockPair& now, const LineRules& rules) {
  LineUpdate update;
  update.line = current;
  // The TSC stood still or went back while CLOCK_MONOTONIC moved on, or the other way round.
  if (now.tsc <= first.tsc || now.ns <= first.ns) {
    update.trusted = false;
    return update;
  }
  const uint64_t baseline_ns = now.ns - first.ns;
  if (baseline_ns < rules.min_baseline_ns) return update;
  using U128 = unsigned __int128;
  const U128 rate = (U128{baseline_ns} << kTscLineShift) / (now.tsc - first.tsc);
  // A TSC between 50 MHz and 20 GHz, or it is not counting what we think.
  if (rate < (U128{1} << kTscLineShift) / 20 || rate > (U128{20} << kTscLineShift)) {
    update.trusted = false;
    return update;
  }
  const uint64_t mult = static_cast<uint64_t>(rate);
  if (current.mult == 0) {
    update.line = {now.tsc, now.ns, mult};
    return update;
  }
  const uint64_t predicted = LineNs(current, now.tsc);
  const int64_t offset = static_cast<int64_t>(predicted - now.ns);  // > 0: the line runs ahead
  const uint64_t magnitude = offset < 0 ? static_cast<uint64_t>(-offset) : static_cast<uint64_t>(offset);
  if (magnitude > rules.max_offset_ns) {
    update.trusted = false;
    return update;
  }
  // Continue from where the line stands, sloped to meet CLOCK_MONOTONIC at the next refresh,
  // expected as far ahead as this one came after the last.
  const uint64_t since_last = now.ns > current.base_ns ? now.ns - current.base_ns : 0;
  U128 correction = U128{mult} * magnitude / std::max(since_last, rules.min_slew_ns);
  const U128 max_correction = U128{mult} * rules.max_slew_ppm / 1'000'000;
  if (correction > max_correction) correction = max_correction;
  const uint64_t slope = offset > 0 ? mult - static_cast<uint64_t>(correction) : mult + static_cast<uint64_t>(correction);
  update.line = {now.tsc, predicted, slope};
  return update;
}

bool TscTrustedBy(std::string_view cpu_flags, std::string_view clocksource) {
  auto has_flag = [&](std::string_view flag) {
    for (size_t at = cpu_flags.find(flag); at != std::string_view::npos; at = cpu_flags.find(flag, at + 1)) {
      const bool starts = at == 0 || cpu_flags[at - 1] == ' ' || cpu_flags[at - 1] == '\t' || cpu_flags[at - 1] == ':';
      const size_t end = at + flag.size();
      const bool ends = end == cpu_flags.size() || cpu_flags[end] == ' ' || cpu_flags[end] == '\n';
      if (starts && ends) return true;
    }
    return false;
  };
  return has_flag("constant_tsc") && has_flag("nonstop_tsc") && ClocksourceIsTsc(clocksource);
}

StampClockState CurrentStampClock() {
  using stamp_clock_detail::published;
  const uint64_t generation = published.generation.load(std::memory_order_acquire);
  const uint64_t mult = published.slots[generation & 1].mult.load(std::memory_order_relaxed);
  if (mult == 0) return {};
  return {StampSource::kTsc, static_cast<double>(uint64_t{1} << kTscLineShift) / static_cast<double>(mult)};
}

void StartStampClock() {
  if (calibration.started.exchange(true)) return;
#if defined(__x86_64__)
  if (!TscTrustedHere()) return;
  calibration.trusted = true;
  // An interrupted first read leaves it to the first refresh.
  if (ReadPair(&calibration.first)) calibration.clocksource_checked_ns = calibration.first.ns;
#endif
}

void RefreshStampClock() {
#if defined(__x86_64__)
  ClockPair now;
  if (!calibration.trusted || !ReadPair(&now)) return;
  if (calibration.first.tsc == 0) {
    calibration.first = now;
    calibration.clocksource_checked_ns = now.ns;
    return;
  }
  if (now.ns - calibration.clocksource_checked_ns >= kClocksourceRecheckNs) {
    calibration.clocksource_checked_ns = now.ns;
    if (!KernelClocksourceIsTsc()) return Distrust();
  }
  const LineUpdate update = NextLine(calibration.current, calibration.first, now);
  if (!update.trusted) return Distrust();
  if (update.line.mult == 0) return;  // the first pair is not 10 ms old yet
  calibration.current = update.line;
  Publish(update.line);
#endif
}

}  // namespace ncclwatch::clock
