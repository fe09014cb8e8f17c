// De-duplicates verdicts across polls so that each incident is dumped once, not on every
// poll while it lasts.
//
// An incident is identified by IncidentKeyOf(verdict): (kind, comm_hash, seq), plus the
// process and the moment it blocked for sync_stuck, and the graph for a wait in a replay of a
// CUDA graph (seq is then the replay number). The same key persisting is the same
// incident; a different kind or seq on the same communicator is a new incident. A key is
// reported at most once in the tracker's lifetime (flapping around a threshold does not
// re-report), while an incident that resolves and comes back at another seq is new.
//
// Not thread-safe; one tracker per watchdog.
#ifndef NCCLWATCH_CORE_DETECT_INCIDENT_TRACKER_H_
#define NCCLWATCH_CORE_DETECT_INCIDENT_TRACKER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <set>
#include <tuple>
#include <vector>

#include "core/detect/verdict.h"

namespace ncclwatch::detect {

struct IncidentKey {
  VerdictKind kind = VerdictKind::kNone;
  uint64_t comm_hash = 0;
  uint64_t seq = 0;
  int32_t pid = 0;          // sync_stuck only
  uint64_t since_ns = 0;    // sync_stuck only: a new block is a new incident
  uint64_t graph = 0;       // a wait in a replay (ReplayGraphOf): the graph's key

  friend auto operator<=>(const IncidentKey&, const IncidentKey&) = default;
};

IncidentKey IncidentKeyOf(const Verdict& verdict);

class IncidentTracker {
 public:
  // Remembers this many reported keys; older ones are forgotten first.
  explicit IncidentTracker(size_t memory = 4096);

  // Feeds the verdicts of one poll; returns those that start a new incident, in order.
  std::vector<Verdict> Observe(const std::vector<Verdict>& verdicts);

  // Incidents present in the last poll.
  size_t active_count() const { return active_.size(); }

 private:
  size_t memory_;
  std::set<IncidentKey> reported_;
  std::deque<IncidentKey> reported_order_;
  std::set<IncidentKey> active_;
};

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_INCIDENT_TRACKER_H_
