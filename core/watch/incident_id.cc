#include "core/watch/incident_id.h"

#include <cinttypes>
#include <cstdio>

namespace ncclwatch::watch {

std::string HexHash(uint64_t hash) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, hash);
  return buf;
}

std::string IncidentIdOf(const detect::Verdict& verdict) {
  const std::string kind = detect::ToString(verdict.kind);
  if (verdict.kind == detect::VerdictKind::kSyncStuck) {
    return kind + "-" + std::to_string(verdict.subject_pid) + "-" + std::to_string(verdict.since_ns);
  }
  return kind + "-" + HexHash(verdict.comm_hash) + "-" + std::to_string(verdict.seq);
}

}  // namespace ncclwatch::watch
