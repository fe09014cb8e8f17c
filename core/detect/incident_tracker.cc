#include "core/detect/incident_tracker.h"

#include <algorithm>

namespace ncclwatch::detect {

IncidentKey IncidentKeyOf(const Verdict& verdict) {
  IncidentKey key{verdict.kind, verdict.comm_hash, verdict.seq, 0, 0, ReplayGraphOf(verdict)};
  if (verdict.kind == VerdictKind::kSyncStuck) {
    key.pid = verdict.subject_pid;
    key.since_ns = verdict.since_ns;
  }
  return key;
}

IncidentTracker::IncidentTracker(size_t memory) : memory_(std::max<size_t>(memory, 1)) {}

std::vector<Verdict> IncidentTracker::Observe(const std::vector<Verdict>& verdicts) {
  std::vector<Verdict> fresh;
  std::set<IncidentKey> now_active;
  for (const Verdict& verdict : verdicts) {
    IncidentKey key = IncidentKeyOf(verdict);
    now_active.insert(key);
    if (!reported_.insert(key).second) continue;
    reported_order_.push_back(key);
    fresh.push_back(verdict);
  }
  // Forget the oldest reported incidents, but never one still going on, or it would be
  // reported again on the next poll.
  for (size_t budget = reported_order_.size(); reported_order_.size() > memory_ && budget > 0;
       --budget) {
    IncidentKey oldest = reported_order_.front();
    reported_order_.pop_front();
    if (now_active.count(oldest)) {
      reported_order_.push_back(oldest);
    } else {
      reported_.erase(oldest);
    }
  }
  active_ = std::move(now_active);
  return fresh;
}

}  // namespace ncclwatch::detect
