// Facts about processes on this host that segment ownership relies on.
#ifndef NCCLWATCH_CORE_SHM_PROCESS_INFO_H_
#define NCCLWATCH_CORE_SHM_PROCESS_INFO_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace ncclwatch::shm {

// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); 0 if unreadable.
// With the pid it identifies a process even across pid reuse.
uint64_t ProcessStartTicks(pid_t pid);

// True while `pid` runs and is the process that started at `start_ticks` (zombies count
// as gone).
bool ProcessIsAlive(pid_t pid, uint64_t start_ticks);

// CLOCK_MONOTONIC in nanoseconds (vDSO, no system call).
uint64_t MonotonicNowNs();

std::string HostName();

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_PROCESS_INFO_H_
