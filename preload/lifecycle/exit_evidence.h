// How this process leaves, recorded in its segment for the peers it may leave waiting
// (core/shm/layout.h, exit evidence).
//
//   * exit(status), a return from main: an on_exit handler (it receives the status) records
//     ExitHow::kStatus, after the watchdog and tracker threads stopped;
//   * _exit(status) (Python's os._exit), which skips on_exit handlers: the exported _exit hook
//     records ExitHow::kStatus (async-signal-safe, no cleanup), then ends the process as glibc does;
//   * a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL) whose disposition was the default when
//     ncclwatch activated: a handler records ExitHow::kSignal and gives the signal back
//     (default disposition restored, signal re-raised), so the process dies exactly as it
//     would have; one the job handles itself is never touched;
//   * a teardown signal (SIGTERM, SIGINT, SIGABRT) that is not ignored: the same handler first
//     runs the last gasp (last_gasp.h, bounded), then passes the signal on: to the job's own
//     handler when it had one (called with the same arguments; it decides, and nothing is
//     recorded), else to the default action as above;
//   * SIGKILL, or a death our handler cannot run in: nothing is recorded, the segment stays
//     kLive with a dead pid, which readers take for a crash.
// The segment is kept as evidence; the last live process of the job on this host removes every
// segment of the job at its exit (shm::RemoveJobIfEnded).
#ifndef NCCLWATCH_PRELOAD_LIFECYCLE_EXIT_EVIDENCE_H_
#define NCCLWATCH_PRELOAD_LIFECYCLE_EXIT_EVIDENCE_H_

#include <sys/types.h>

#include "core/shm/layout.h"

namespace ncclwatch::preload {

// Installs the fatal-signal handlers for `header`, owned by process `owner` (a forked child
// records nothing). Once per process; later calls only change the header.
void ArmExitEvidence(shm::SegmentHeader* header, pid_t owner);

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_LIFECYCLE_EXIT_EVIDENCE_H_
