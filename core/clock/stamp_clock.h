// The clock the hooks stamp records, blocked syncs and inits with: CLOCK_MONOTONIC
// nanoseconds, read from the CPU's time-stamp counter (TSC) through a per-process calibration
// where the TSC can be trusted, and from the vDSO's CLOCK_MONOTONIC otherwise.
//
// Why not CLOCK_MONOTONIC itself: on the developers' VM (AMD EPYC, kvm, clocksource tsc) one
// vDSO read costs 21-50 ns, a fifth to a half of a hook's 100 ns budget (50 ns for a sync).
// It is an rdtsc plus the kernel's conversion under its own seqlock; StampNowNs is the same
// rdtsc plus a conversion with three loads from one cache line, and no system call.
// Why not CLOCK_MONOTONIC_COARSE (5-12 ns): it is the time of the kernel's last tick, so
// stamps fall on a 1-4 ms grid; ops microseconds apart look simultaneous (a trace of a 4-rank
// all_to_all drew 74 overlapping tracks) and every age carries a tick of slack.
//
// The conversion: ns = base_ns + (tsc - base_tsc) * mult / 2^40 (TscLine). The tracker thread
// refreshes the line at every wake (every 10-100 ms, RefreshStampClock): it reads a
// (TSC, CLOCK_MONOTONIC) pair, takes the rate from the pair it read at start (so the rate's
// error shrinks as 1/uptime: 0.1 ppm after a second), and starts the new line where the old
// one stands at that instant, sloped to absorb the old line's offset by the next refresh.
// Stamps therefore never step: within a thread they only increase, and each is within the
// rate's error times one refresh interval of CLOCK_MONOTONIC (tens of ns; 10 us while NTP
// slews CLOCK_MONOTONIC by 200 ppm, with 50 ms refreshes; tests/core/clock checks both).
//
// Why that is safe across cores, sleeps and migrations: the TSC is used only when the CPU
// says it ticks at a constant rate in every P-state (constant_tsc) and through deep C-states
// (nonstop_tsc), and the kernel's own clocksource is `tsc`: CLOCK_MONOTONIC is then itself an
// rdtsc scaled by the kernel, on whichever CPU the reader runs, and the kernel checked that
// the CPUs' TSCs agree (at boot, with TSC_ADJUST) and would have left the `tsc` clocksource if
// they did not. A stamp taken on any CPU, before or after a migration or a sleep, is then as
// comparable as CLOCK_MONOTONIC read there. Refreshes keep checking: a clocksource that is no
// longer `tsc` (checked every 10 s), or a line found more than 1 ms off CLOCK_MONOTONIC (a
// suspend that stopped the TSC, a VM moved to a host whose TSC runs at another rate), ends
// the TSC for the process: every later stamp reads CLOCK_MONOTONIC. Before the first
// calibration (the first 10 ms after StartStampClock), on other CPUs than x86-64, and with no
// refreshing thread started, stamps read CLOCK_MONOTONIC too.
#ifndef NCCLWATCH_CORE_CLOCK_STAMP_CLOCK_H_
#define NCCLWATCH_CORE_CLOCK_STAMP_CLOCK_H_

#include <atomic>
#include <cstdint>
#include <string_view>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "core/clock/monotonic.h"

namespace ncclwatch::clock {

// A linear map from TSC ticks to CLOCK_MONOTONIC ns. mult is ns per tick times 2^40 (rounding
// costs under 1 ns in 10 minutes); 0: no line (stamps read CLOCK_MONOTONIC).
struct TscLine {
  uint64_t base_tsc = 0;
  uint64_t base_ns = 0;
  uint64_t mult = 0;
};
inline constexpr unsigned kTscLineShift = 40;

// The line's ns at `tsc`, before its base too (a thread that read the TSC just before a
// refresh published a line based after it).
inline constexpr uint64_t LineNs(const TscLine& line, uint64_t tsc) {
  const __int128 ticks = static_cast<int64_t>(tsc - line.base_tsc);
  const __int128 scaled = (ticks * static_cast<__int128>(line.mult)) >> kTscLineShift;
  return line.base_ns + static_cast<uint64_t>(static_cast<int64_t>(scaled));
}

// One TSC read and one CLOCK_MONOTONIC read taken together.
struct ClockPair {
  uint64_t tsc = 0;
  uint64_t ns = 0;
};

// The calibration's constants (stamp_clock.cc, tests).
struct LineRules {
  uint64_t min_baseline_ns = 10'000'000;  // no line until the first pair is 10 ms old
  uint64_t min_slew_ns = 1'000'000;       // an offset is absorbed by the next refresh, expected
                                          // as far ahead as the last one was back, at least 1 ms
  uint64_t max_slew_ppm = 500;            // no faster than NTP slews CLOCK_MONOTONIC itself
  uint64_t max_offset_ns = 1'000'000;     // further off: the TSC does not follow the clock
};

// What a refresh publishes.
struct LineUpdate {
  TscLine line;        // mult 0 while the baseline is shorter than min_baseline_ns
  bool trusted = true;  // false: the TSC does not follow CLOCK_MONOTONIC; stop using it
};

// The line to publish after reading `now`, given the line in use (`current`, mult 0 when
// none) and the pair read at start (`first`). Pure: the calibration's whole arithmetic.
LineUpdate NextLine(const TscLine& current, const ClockPair& first, const ClockPair& now,
                    const LineRules& rules = LineRules{});

// Whether the TSC may stand in for CLOCK_MONOTONIC: `cpu_flags` (the "flags" line of
// /proc/cpuinfo) names constant_tsc and nonstop_tsc, and `clocksource` (the kernel's
// current_clocksource, trailing newline allowed) is "tsc".
bool TscTrustedBy(std::string_view cpu_flags, std::string_view clocksource);

enum class StampSource { kMonotonic, kTsc };
struct StampClockState {
  StampSource source = StampSource::kMonotonic;
  double tsc_ghz = 0;  // ticks per ns of the line in use; 0 with kMonotonic
};
StampClockState CurrentStampClock();

namespace stamp_clock_detail {
// The published line: two slots and a generation, in one cache line. The refresher writes the
// slot readers are not told to use, then raises the generation; a reader that finds the
// generation changed under it (it was descheduled across two refreshes) reads again. No
// reader ever waits for the writer.
struct alignas(64) PublishedLine {
  std::atomic<uint64_t> generation{0};
  struct Slot {
    std::atomic<uint64_t> base_tsc{0};
    std::atomic<uint64_t> base_ns{0};
    std::atomic<uint64_t> mult{0};
  } slots[2];
};
static_assert(sizeof(PublishedLine) == 64);
extern PublishedLine published;
}  // namespace stamp_clock_detail

// CLOCK_MONOTONIC ns now, for stamps: an rdtsc and a multiplication where the TSC is
// trusted and calibrated (9.5-10 ns on the developers' VM, against 22 ns for
// clock_gettime(CLOCK_MONOTONIC): scripts/bench --only hooks, floor stamp_read), a vDSO
// clock_gettime otherwise. No lock, allocation or system call.
inline uint64_t StampNowNs() {
#if defined(__x86_64__)
  using stamp_clock_detail::published;
  const uint64_t tsc = __rdtsc();  // first: its latency overlaps the loads below
  for (;;) {
    const uint64_t generation = published.generation.load(std::memory_order_acquire);
    const auto& slot = published.slots[generation & 1];
    const TscLine line{slot.base_tsc.load(std::memory_order_relaxed), slot.base_ns.load(std::memory_order_relaxed),
                       slot.mult.load(std::memory_order_relaxed)};
    std::atomic_thread_fence(std::memory_order_acquire);
    if (published.generation.load(std::memory_order_relaxed) != generation) [[unlikely]] continue;
    if (line.mult == 0) [[unlikely]] break;
    return LineNs(line, tsc);
  }
#endif
  return MonotonicNowNs();
}

// Takes the first (TSC, CLOCK_MONOTONIC) pair, if the TSC can be trusted here. Idempotent;
// StampNowNs reads CLOCK_MONOTONIC until a refresh 10 ms later publishes the first line.
void StartStampClock();

// Reads a pair and publishes the next line (NextLine), or ends the TSC's use for good. Called
// by one thread per process (the tracker's), at every wake; about 100 ns.
void RefreshStampClock();

}  // namespace ncclwatch::clock

#endif  // NCCLWATCH_CORE_CLOCK_STAMP_CLOCK_H_
