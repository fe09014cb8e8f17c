// The watchdog's phases before a process's first communicator is ready (core/watch/watch_phase.h).
#include "core/watch/watch_phase.h"

#include <catch2/catch.hpp>

namespace ncclwatch::watch {
namespace {

constexpr uint64_t kSec = 1'000'000'000ull;

TEST_CASE("quiet through a first init younger than half the threshold, then its own init only", "[phase]") {
  const uint64_t stall = 60 * kSec;
  CHECK(PhaseOf(false, 0, stall) == WatchPhase::kQuiet);
  CHECK(PhaseOf(false, 29 * kSec, stall) == WatchPhase::kQuiet);
  CHECK(PhaseOf(false, 30 * kSec, stall) == WatchPhase::kOwnInit);
  CHECK(PhaseOf(true, 0, stall) == WatchPhase::kWatching);
  CHECK(PhaseOf(true, 100 * kSec, stall) == WatchPhase::kWatching);
}

TEST_CASE("a verdict concerns our init through its communicator or one it accounts for", "[phase]") {
  detect::Verdict v;
  v.comm_hash = 0x01d;
  CHECK(ConcernsOwnInit(v, {0x01d}));
  CHECK_FALSE(ConcernsOwnInit(v, {0x0e1}));
  v.explained_comms = {0x0e1};  // a stale id: our peers' communicator is the one we initialise
  CHECK(ConcernsOwnInit(v, {0x0e1}));
  CHECK_FALSE(ConcernsOwnInit(v, {}));
  detect::Verdict sync;  // sync_stuck: no communicator
  CHECK_FALSE(ConcernsOwnInit(sync, {0}));
}

}  // namespace
}  // namespace ncclwatch::watch
