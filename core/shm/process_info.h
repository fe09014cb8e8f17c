// Facts about processes on this host that segment ownership relies on.
#ifndef NCCLWATCH_CORE_SHM_PROCESS_INFO_H_
#define NCCLWATCH_CORE_SHM_PROCESS_INFO_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ncclwatch::shm {

// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); 0 if unreadable.
// With the pid it identifies a process even across pid reuse.
uint64_t ProcessStartTicks(pid_t pid);

// When the process that started `start_ticks` after boot began, on the wall clock (ns since the
// epoch): to tell files written before it started (a trigger of an earlier attempt) from its
// own time. Clock ticks are 10 ms (USER_HZ 100); 0 if a clock is unreadable.
uint64_t StartTicksToUnixNs(uint64_t start_ticks);

// One look at a process: whether it runs, and the state that same /proc/<pid>/stat read gave.
struct ProcessLook {
  bool alive = false;
  char state = 0;  // field 3 ('R', 'S', 'D', 'T', ...); 0 when not read (the caller itself, or dead)
};

// True while `pid` runs and is the process that started at `start_ticks` (zombies count
// as gone).
bool ProcessIsAlive(pid_t pid, uint64_t start_ticks);
// The same, with the state: the watchdog asks both of every peer at every poll, and each
// /proc/<pid>/stat read (the kernel formats 52 fields) costs 10-20 us on the developers' VM.
// The caller itself is not read (state 0).
ProcessLook LookAtProcess(pid_t pid, uint64_t start_ticks);

// This boot's id (/proc/sys/kernel/random/boot_id, 36 characters), "" if unreadable. A segment
// written in another boot (a copy, or a /dev/shm that outlived a reboot) names processes of
// that boot: none of them runs now, whatever pid they had.
std::string BootId();

// True when a segment's process is alive here: same boot (an empty id on either side is not
// a match) and ProcessIsAlive.
bool ProcessOfBootIsAlive(const char* boot_id, size_t boot_id_bytes, pid_t pid, uint64_t start_ticks);
ProcessLook LookAtProcessOfBoot(const char* boot_id, size_t boot_id_bytes, pid_t pid, uint64_t start_ticks);

std::string HostName();

// What the kernel says a process is doing now: evidence for a rank that cannot speak for
// itself (stopped by SIGSTOP or a debugger, stuck in a driver in uninterruptible sleep).
struct OsState {
  char state = 0;  // /proc/<pid>/stat field 3: 'R', 'S', 'D', 'T', 't', 'Z', ...; 0 unknown
  // The kernel function it sleeps in (/proc/<pid>/wchan), read for 'D' and 'T'; "" unknown.
  std::string wchan;
  // /proc/<pid>/stack (readable by root only), innermost first, for 'D': the driver call it
  // is stuck in. Empty when unreadable.
  std::vector<std::string> kernel_stack;
};
// `state` as a ProcessLook read it; 0 reads it from /proc/<pid>/stat here.
OsState ReadOsState(pid_t pid, char state = 0);

// Whether process `pid` maps /dev/shm/`entry` (/proc/<pid>/maps, read up to 16 MiB).
enum class Mapping { kMapped, kNotMapped, kUnknown };
Mapping SegmentMappedBy(pid_t pid, const std::string& entry);

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_PROCESS_INFO_H_
