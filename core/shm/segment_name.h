// Names of ncclwatch shared-memory segments:
//   /ncclwatch.<uid>.<job id>.<pid>.<process start ticks>[-<attempt>]
// The job id is sanitized to [A-Za-z0-9_.-] (other bytes become '_', at most
// kMaxJobIdLength bytes, "default" when empty). Since a job id may contain '.', a name
// belongs to a job only when what follows the job prefix is exactly "<pid>.<ticks>".
#ifndef NCCLWATCH_CORE_SHM_SEGMENT_NAME_H_
#define NCCLWATCH_CORE_SHM_SEGMENT_NAME_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace ncclwatch::shm {

inline constexpr size_t kMaxJobIdLength = 64;
inline constexpr std::string_view kSegmentPrefix = "ncclwatch.";

std::string SanitizeJobId(std::string_view raw);

// For shm_open/shm_unlink (leading '/'). `attempt` > 0 appends "-<attempt>" to the ticks:
// the name a process falls back to when someone else already holds its first choice.
inline constexpr int kMaxSegmentNameAttempts = 16;
std::string SegmentName(uid_t uid, std::string_view job_id, pid_t pid, uint64_t start_ticks, int attempt = 0);

// The /dev/shm entry name shared by all segments of one job (no leading '/').
std::string JobEntryPrefix(uid_t uid, std::string_view job_id);

struct ParsedSegmentName {
  pid_t pid = 0;
  uint64_t start_ticks = 0;
};

// `entry` is a /dev/shm directory entry name (no leading '/').
bool ParseSegmentEntry(std::string_view entry, uid_t uid, std::string_view job_id, ParsedSegmentName* out);

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_SEGMENT_NAME_H_
