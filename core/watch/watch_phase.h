// What a process's watchdog does before the process's first communicator is ready.
//
// Why: the first communicator's init is where the job's processes meet. torch's root publishes
// the unique id in its store and the other ranks read it, then every rank connects; a torchrun
// restart and every re-created group go through it again, and when the store still holds the
// previous group's id under the same key, who arrives first decides whether the group forms at
// all (docs/torchrun-restart-race.md). Our start-up work there took the job's CPU and the
// loader's lock exactly then: arming the stack capture (dlopen of libunwind and the symbolizer
// with its abseil libraries), removing dead runs' segments (a scan of /dev/shm), and answering
// the trigger files an earlier attempt left with a dump whose stack capture signals every
// thread of a process still in its init. Measured on the sim (2 shared cores), a first
// ncclCommInitRank took 0.1-0.6 ms without the preload and 12-22 ms with it when the
// watchdog's start-up ran beside it.
//
// Phases, from the first init hook (where the watchdog starts, so that an init that never
// returns is still watched):
//   kQuiet     no communicator of this process is ready and its first init is younger than
//              QuietLimitNs: the watchdog sleeps. No poll, nothing loaded, no trigger read.
//   kOwnInit   still none ready, the init has lasted QuietLimitNs: it arms the capture and
//              polls, and dumps only verdicts about a communicator this process is
//              initialising (its own init hang, a stale unique id). No trigger is answered: a
//              process still in its init is interrupted for nobody else's incident.
//   kWatching  a communicator of this process is ready: everything, as README.md describes.
// A last gasp (teardown) is answered in every phase; it dumps only what this process waited on.
#ifndef NCCLWATCH_CORE_WATCH_WATCH_PHASE_H_
#define NCCLWATCH_CORE_WATCH_WATCH_PHASE_H_

#include <cstdint>
#include <set>

#include "core/detect/verdict.h"

namespace ncclwatch::watch {

enum class WatchPhase { kQuiet, kOwnInit, kWatching };

// Half the stall threshold: an init hang is declared at the threshold, so the capture is armed
// (its libraries loaded) well before a dump of it needs them, yet never during a healthy init,
// which takes milliseconds to seconds.
uint64_t QuietLimitNs(uint64_t stall_threshold_ns);

WatchPhase PhaseOf(bool comm_ready, uint64_t since_first_init_ns, uint64_t stall_threshold_ns);

// Whether `verdict` is about one of `own_inits`, the communicators this process is initialising:
// its own communicator, or one the verdict accounts for (detect::Verdict::explained_comms).
bool ConcernsOwnInit(const detect::Verdict& verdict, const std::set<uint64_t>& own_inits);

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_WATCH_PHASE_H_
