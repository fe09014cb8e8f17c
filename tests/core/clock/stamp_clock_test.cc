// The calibration's arithmetic (NextLine, LineNs) over synthetic TSCs, and the trust rule.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>

#include "core/clock/stamp_clock.h"

namespace ncclwatch::clock {
namespace {

constexpr double kGhz = 2.596;  // the developers' VM

// A TSC of `ghz` whose CLOCK_MONOTONIC runs `ppm` faster than the TSC's nominal rate from
// `ppm_from_ns` on (NTP slewing), starting at tsc0 / mono0.
struct SyntheticClock {
  double ghz = kGhz;
  double ppm = 0;
  double ppm_from_ns = 0;
  uint64_t tsc0 = 123'456'789'000ull;
  uint64_t mono0 = 5'000'000'000ull;

  uint64_t TscAt(double elapsed_ns) const { return tsc0 + static_cast<uint64_t>(elapsed_ns * ghz); }
  uint64_t MonoAt(double elapsed_ns) const {
    const double slewed = elapsed_ns > ppm_from_ns ? (elapsed_ns - ppm_from_ns) * ppm * 1e-6 : 0;
    return mono0 + static_cast<uint64_t>(elapsed_ns + slewed);
  }
  ClockPair PairAt(double elapsed_ns, int64_t jitter_ns = 0) const {
    return {TscAt(elapsed_ns), MonoAt(elapsed_ns) + static_cast<uint64_t>(jitter_ns)};
  }
};

int64_t Diff(uint64_t a, uint64_t b) { return static_cast<int64_t>(a - b); }

TEST_CASE("LineNs maps ticks to ns on both sides of its base") {
  const TscLine line{1'000'000, 7'000'000'000ull, static_cast<uint64_t>(std::ldexp(1.0 / 2.5, kTscLineShift))};
  CHECK(LineNs(line, 1'000'000) == 7'000'000'000ull);
  CHECK(std::llabs(Diff(LineNs(line, 1'000'000 + 2'500'000'000ull), 8'000'000'000ull)) <= 1);
  CHECK(std::llabs(Diff(LineNs(line, 1'000'000 - 2'500), 7'000'000'000ull - 1'000)) <= 1);
  // Ten minutes of ticks, beyond 64 bits once multiplied.
  CHECK(std::llabs(Diff(LineNs(line, 1'000'000 + 1'500'000'000'000ull), 7'000'000'000ull + 600'000'000'000ull)) <= 1);
}

TEST_CASE("no line until the first pair is old enough, then one through the pair at its rate") {
  const SyntheticClock clock;
  const ClockPair first = clock.PairAt(0);
  LineUpdate update = NextLine({}, first, clock.PairAt(9e6));
  CHECK(update.trusted);
  CHECK(update.line.mult == 0);
  update = NextLine({}, first, clock.PairAt(10e6));
  REQUIRE(update.trusted);
  REQUIRE(update.line.mult != 0);
  CHECK(update.line.base_ns == clock.MonoAt(10e6));
  CHECK(std::fabs(std::ldexp(1.0, kTscLineShift) / static_cast<double>(update.line.mult) - kGhz) < kGhz * 1e-6);
  // One second on, the line is within 100 ns of the clock.
  CHECK(std::llabs(Diff(LineNs(update.line, clock.TscAt(1.01e9)), clock.MonoAt(1.01e9))) < 100);
}

// Refreshes every `period_ns` for `total_ns` with pairs off by up to `jitter_ns`; checks the
// new line starts where the old one stood (stamps never step), and returns the largest
// distance between the line and the clock seen between refreshes.
int64_t WorstOffset(const SyntheticClock& clock, double period_ns, double total_ns, int64_t jitter_ns) {
  std::mt19937_64 random(42);
  std::uniform_int_distribution<int64_t> jitter(-jitter_ns, jitter_ns);
  const ClockPair first = clock.PairAt(0);
  TscLine line;
  int64_t worst = 0;
  for (double t = period_ns; t <= total_ns; t += period_ns) {
    if (line.mult != 0) {
      for (double probe = t - period_ns; probe < t; probe += period_ns / 4) {
        worst = std::max<int64_t>(worst, std::llabs(Diff(LineNs(line, clock.TscAt(probe)), clock.MonoAt(probe))));
      }
    }
    const ClockPair now = clock.PairAt(t, jitter(random));
    const LineUpdate update = NextLine(line, first, now);
    REQUIRE(update.trusted);
    if (line.mult != 0) {
      REQUIRE(update.line.base_tsc == now.tsc);
      REQUIRE(update.line.base_ns == LineNs(line, now.tsc));
      REQUIRE(update.line.mult > 0);
    }
    line = update.line;
  }
  return worst;
}

TEST_CASE("refreshed lines stay continuous and within tens of ns of an undisturbed clock") {
  const SyntheticClock clock;
  CHECK(WorstOffset(clock, 25e6, 120e9, 0) < 20);
  CHECK(WorstOffset(clock, 100e6, 120e9, 30) < 200);
}

TEST_CASE("a clock slewed by NTP is followed within the slew times one refresh") {
  SyntheticClock clock;
  clock.ppm = 200;
  clock.ppm_from_ns = 30e9;
  // The rate from the first pair lags the slewed clock's by up to 200 ppm: 20 us over a 100 ms
  // refresh, 10 us over 50 ms, each taken out by the next refresh.
  CHECK(WorstOffset(clock, 100e6, 120e9, 30) < 21'000);
  CHECK(WorstOffset(clock, 50e6, 120e9, 30) < 10'500);
}

TEST_CASE("a TSC that stops, goes back or runs at another rate is no longer trusted") {
  const SyntheticClock clock;
  const ClockPair first = clock.PairAt(0);
  const TscLine line = NextLine({}, first, clock.PairAt(50e6)).line;
  REQUIRE(line.mult != 0);
  // Suspended for 5 s with the TSC stopped: CLOCK_MONOTONIC also stopped, but the TSC may be
  // reset (back before the first pair) on resume.
  ClockPair reset = clock.PairAt(100e6);
  reset.tsc = clock.tsc0 - 1000;
  CHECK_FALSE(NextLine(line, first, reset).trusted);
  // The clock moved 2 ms more than the TSC says (a VM moved to a host with a slower TSC).
  ClockPair off = clock.PairAt(100e6);
  off.ns += 2'000'000;
  CHECK_FALSE(NextLine(line, first, off).trusted);
  // The TSC stood still while the clock went on.
  CHECK_FALSE(NextLine(line, first, {first.tsc, first.ns + 50'000'000}).trusted);
  // Within 1 ms it is slewed away, not distrusted.
  off.ns -= 1'500'000;
  CHECK(NextLine(line, first, off).trusted);
}

TEST_CASE("the TSC is trusted only with constant_tsc, nonstop_tsc and the tsc clocksource") {
  const char* flags = "flags\t\t: fpu vme de pse tsc msr pae constant_tsc rep_good nopl nonstop_tsc cpuid tsc_known_freq";
  CHECK(TscTrustedBy(flags, "tsc\n"));
  CHECK(TscTrustedBy(flags, "tsc"));
  CHECK_FALSE(TscTrustedBy(flags, "kvm-clock\n"));
  CHECK_FALSE(TscTrustedBy(flags, "tsc-early\n"));
  CHECK_FALSE(TscTrustedBy(flags, ""));
  CHECK_FALSE(TscTrustedBy("flags\t\t: fpu tsc constant_tsc nonstop_tsc_x", "tsc\n"));
  CHECK_FALSE(TscTrustedBy("flags\t\t: fpu tsc nonstop_tsc", "tsc\n"));
  CHECK_FALSE(TscTrustedBy("flags\t\t: fpu tsc xconstant_tsc nonstop_tsc", "tsc\n"));
  CHECK(TscTrustedBy("flags\t\t: nonstop_tsc constant_tsc", "tsc\n"));
  CHECK_FALSE(TscTrustedBy("", "tsc\n"));
}

}  // namespace
}  // namespace ncclwatch::clock
