// Last-gasp dumps: a rank being torn down leaves its evidence before it goes.
//
// Why: the hang a user most needs explained is often cut short before NCCLWATCH_STALL_SEC.
// torch's own watchdog aborts a rank whose collective outlived init_process_group(timeout=)
// (SIGABRT), torchrun then stops the others (SIGTERM), and SLURM and Kubernetes stop a hung job
// with SIGTERM, then SIGKILL about 30 s later. Without this, such a job leaves no dump.
//
// How: teardown (SIGTERM, SIGINT, SIGABRT reaching exit_evidence.cc's handler, or a thread
// entering ncclCommAbort / ncclCommRevoke) calls RunLastGasp, which asks the watchdog thread
// for a last look and waits for its answer, at most NCCLWATCH_LAST_GASP_SEC (3 s). The
// watchdog polls as usual (new incidents and trigger files of our run dump as always), then
// writes a last-gasp dump, and a trigger file so that its peers dump too, when this process
// has an op, init or host sync pending longer than NCCLWATCH_LAST_GASP_FLOOR_SEC (1 s) or an
// incident open. A clean, idle teardown finds nothing to dump: it costs one poll of this
// host's segments (~1 ms), and a clean exit() costs nothing (no teardown path runs).
// Then the caller goes on exactly as it would have: the job's handler runs, or the signal's
// default action with the same signal and status.
//
// The handler side is async-signal-safe: atomics, clock_gettime, nanosleep and one write() to the
// watchdog's eventfd only. It waits by sleeping in 2 ms steps rather than on a lock, which a
// signal handler may not take.
#ifndef NCCLWATCH_PRELOAD_LIFECYCLE_LAST_GASP_H_
#define NCCLWATCH_PRELOAD_LIFECYCLE_LAST_GASP_H_

#include <cstdint>

namespace ncclwatch::preload {

// What started the teardown: a signal number, or one of these.
inline constexpr int kLastGaspCommAbort = -1;
inline constexpr int kLastGaspCommRevoke = -2;

// The watchdog answers requests from now on, each within `budget_ns` (0: last gasps off);
// `floor_ns` is NCCLWATCH_LAST_GASP_FLOOR_SEC.
void ArmLastGasp(uint64_t budget_ns, uint64_t floor_ns) noexcept;
// Whether an op enqueued at `enqueue_ns` (0: none) has waited long enough at `now_ns` to be
// worth a last gasp, while armed. For the abort path, which asks only then: torch aborts its
// communicators at every shutdown, and a healthy one must not wait for the watchdog.
bool LastGaspWorthy(uint64_t enqueue_ns, uint64_t now_ns) noexcept;
// The watchdog stopped: requests return at once.
void DisarmLastGasp() noexcept;

// Asks for the last look and waits for it, at most the budget. The first request of the
// process is the one answered; a later caller (SIGTERM during the dump an abort asked for)
// waits for that same answer. Async-signal-safe.
void RunLastGasp(int cause) noexcept;

// The watchdog's side: the cause of an unanswered request (0 when none), then Answer() once
// it is done (dump written or not needed).
int PendingLastGasp() noexcept;
// CLOCK_MONOTONIC when the pending request was made: the teardown's start. Peers that exit after
// it go down in the same teardown, not before it.
uint64_t LastGaspRequestNs() noexcept;
void AnswerLastGasp() noexcept;

// The watchdog's wake-up, so that it sleeps a whole poll interval yet answers a request at once
// (looking every 50 ms instead would be 20 wakeups a second, 0.16 % of a core against 0.08 %).
// An eventfd made once per process by the watchdog thread (again in a forked child), and never
// closed: a handler may write to it at any moment, and a closed number could be reused by the
// job's next open(). -1 when none could be made; the watchdog then looks every 50 ms.
int LastGaspWakeFd() noexcept;
// Wakes the watchdog (RunLastGasp does; so does stopping it). Async-signal-safe; keeps errno.
void WakeWatchdog() noexcept;
// Empties the eventfd after a wake-up.
void DrainWatchdogWake() noexcept;

// "SIGTERM", "SIGABRT", "ncclCommAbort", ... for log lines and dumps.
const char* LastGaspCauseName(int cause) noexcept;

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_LIFECYCLE_LAST_GASP_H_
