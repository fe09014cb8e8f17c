#include "core/watch/incident_id.h"

#include "core/detect/incident_tracker.h"
#include "core/format/hex.h"

namespace ncclwatch::watch {

std::string IncidentIdOf(const detect::Verdict& verdict) {
  const std::string kind = detect::ToString(verdict.kind);
  if (verdict.kind == detect::VerdictKind::kSyncStuck) {
    return kind + "-" + std::to_string(verdict.subject_pid) + "-" + std::to_string(verdict.since_ns);
  }
  // A wait in a replay of a CUDA graph: the graph's key before the replay number.
  if (const uint64_t graph = detect::ReplayGraphOf(verdict); graph != 0) {
    return kind + "-" + format::FormatHex(verdict.comm_hash) + "-" + format::FormatHex(graph) + "-" +
           std::to_string(verdict.seq);
  }
  return kind + "-" + format::FormatHex(verdict.comm_hash) + "-" + std::to_string(verdict.seq);
}

}  // namespace ncclwatch::watch
