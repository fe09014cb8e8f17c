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

// Sets detected_mono_ns, detected_unix_ns and detected_iso to now (clock::NowInstant).
void StampDetectionTime(Incident* incident) noexcept;

// The kernel driver version in /proc/driver/nvidia/version (e.g. "545.23.08"); "" when
// there is no NVIDIA driver. `path` is for tests.
std::string ReadNvidiaDriverVersion(const std::string& path = "/proc/driver/nvidia/version") noexcept;

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_PROCESS_FACTS_H_
