#include "core/detect/completion.h"

#include <algorithm>
#include <unordered_set>

namespace ncclwatch::detect {

uint64_t EffectiveLastCompleted(uint64_t published_last_completed,
                                const std::vector<RecordFacts>& records) {
  uint64_t completed = published_last_completed;
  std::unordered_set<uint64_t> untrackable;
  for (const RecordFacts& r : records) {
    if (r.complete_ns != 0) completed = std::max(completed, r.seq);
    if (r.never_completes) untrackable.insert(r.seq);
  }
  while (untrackable.count(completed + 1)) ++completed;
  return completed;
}

}  // namespace ncclwatch::detect
