// Facts a process can find out about itself for its dump, so the watchdog only has to add
// what it alone knows (ranks, verdict, communicators, stacks, CUDA/NCCL versions).
// Nothing here throws; a fact that cannot be read stays at its default.
#ifndef NCCLWATCH_CORE_DUMP_PROCESS_FACTS_H_
#define NCCLWATCH_CORE_DUMP_PROCESS_FACTS_H_

#include <cstdint>
#include <map>
#include <string>

#include "core/dump/dump.h"

namespace ncclwatch::dump {

// process.host, pid, exe, cmdline; environment.kernel_release, nvidia_driver, and
// environment.nccl_env = `nccl_env` (the NCCL_* variables, read by core/settings: this library
// reads no environment).
void FillProcessFacts(const std::map<std::string, std::string>& nccl_env, RankDump* dump) noexcept;

// One instant on the monotonic and the wall clock, and the wall clock's ISO-8601 form ("" when
// out of memory): what a dump or a resolution note stamps.
struct Instant {
  uint64_t mono_ns = 0;
  uint64_t unix_ns = 0;
  std::string iso;
};
Instant NowInstant() noexcept;

// Sets detected_mono_ns, detected_unix_ns and detected_iso to now.
void StampDetectionTime(Incident* incident) noexcept;

// "2026-11-21T23:12:53.123456789Z".
std::string FormatIso8601Utc(uint64_t unix_ns);

// The kernel driver version in /proc/driver/nvidia/version (e.g. "545.23.08"); "" when
// there is no NVIDIA driver. `path` is for tests.
std::string ReadNvidiaDriverVersion(const std::string& path = "/proc/driver/nvidia/version") noexcept;

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_PROCESS_FACTS_H_
