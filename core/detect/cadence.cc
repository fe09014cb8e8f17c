#include "core/detect/cadence.h"

#include <algorithm>
#include <cmath>

namespace ncclwatch::detect {

std::vector<uint64_t> EnqueueIntervals(const CommFacts& comm) {
  std::vector<const RecordFacts*> sorted;
  for (const RecordFacts& record : comm.records) {
    if (record.enqueue_ns != 0) sorted.push_back(&record);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->seq < b->seq; });
  std::vector<uint64_t> intervals;
  for (size_t i = 1; i < sorted.size(); ++i) {
    const auto* prev = sorted[i - 1];
    const auto* next = sorted[i];
    if (next->seq == prev->seq + 1 && next->enqueue_ns >= prev->enqueue_ns) {
      intervals.push_back(next->enqueue_ns - prev->enqueue_ns);
    }
  }
  return intervals;
}

uint64_t Quantile(std::vector<uint64_t> values, double q) {
  if (values.empty()) return 0;
  double clamped = std::clamp(q, 0.0, 1.0);
  size_t index = static_cast<size_t>(std::ceil(clamped * values.size()));
  index = std::clamp<size_t>(index, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + index, values.end());
  return values[index];
}

uint64_t StallThresholdFor(const CommGroup& group, const DetectConfig& config) {
  if (!config.adaptive) return config.stall_threshold_ns;
  std::vector<uint64_t> intervals;
  for (const CommMember& member : group.members) {
    std::vector<uint64_t> own = EnqueueIntervals(*member.comm);
    intervals.insert(intervals.end(), own.begin(), own.end());
  }
  if (static_cast<int>(intervals.size()) < config.min_intervals_for_cadence) {
    return config.stall_threshold_ns;
  }
  double scaled = config.adaptive_factor * static_cast<double>(Quantile(intervals, 0.99));
  uint64_t adaptive = static_cast<uint64_t>(std::min(scaled, 1e19));
  uint64_t floor = std::min(config.adaptive_min_ns, config.stall_threshold_ns);
  return std::clamp(adaptive, floor, config.stall_threshold_ns);
}

uint64_t LoneRankThreshold(const CommFacts& comm, uint64_t base, const DetectConfig& config) {
  std::vector<uint64_t> intervals = EnqueueIntervals(comm);
  if (static_cast<int>(intervals.size()) < config.min_intervals_for_cadence) return base;
  double scaled = config.lone_rank_factor * static_cast<double>(Quantile(intervals, 0.5));
  return std::max(base, static_cast<uint64_t>(std::min(scaled, 1e19)));
}

}  // namespace ncclwatch::detect
