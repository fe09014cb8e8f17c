#include "core/watch/incident_id.h"

#include "core/format/hex.h"

namespace ncclwatch::watch {

std::string IncidentIdOf(const detect::Verdict& verdict) {
  const std::string kind = detect::ToString(verdict.kind);
  if (verdict.kind == detect::VerdictKind::kSyncStuck) {
    return kind + "-" + std::to_string(verdict.subject_pid) + "-" + std::to_string(verdict.since_ns);
  }
  return kind + "-" + format::FormatHex(verdict.comm_hash) + "-" + std::to_string(verdict.seq);
}

}  // namespace ncclwatch::watch
