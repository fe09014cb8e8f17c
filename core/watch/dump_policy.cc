#include "core/watch/dump_policy.h"

namespace ncclwatch::watch {

bool DumpPolicy::Claim(const std::string& incident_id) {
  if (!claimed_.insert(incident_id).second) return false;
  order_.push_back(incident_id);
  while (order_.size() > capacity_) {
    claimed_.erase(order_.front());
    order_.pop_front();
  }
  return true;
}

}  // namespace ncclwatch::watch
