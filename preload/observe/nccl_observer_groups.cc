// Ops issued inside ncclGroupStart/End: settled at the outermost end.
//
// Each grouped op's record is appended before the real call, with the group's key, as an
// ungrouped op's is (BeginOp, nccl_observer_ops.cc); once NCCL has queued the op, its
// (communicator, stream) range joins the thread's open group (JoinGroup). The outermost
// ncclGroupEnd, which launches the group, records their completion events after it returned:
// SettleGroupRange (ops.cc) for a group on one communicator and stream, EndOutermostGroup
// (here) for more. ncclGroupSimulateEnd launches nothing, and its records are taken back
// (CommSlot::Retract): their seqs go to the next ops, as if never issued. The group's ends
// themselves only count depth (group_depth.h) unless the group has work.
//
// Each op's record is appended before the call, like any op's, and a group on one
// communicator and stream keeps its one range beside the vector, settled without it: our own
// time per group of one op is within a few ns of the ungrouped op's (scripts/bench --only hooks),
// where buffering the ops until the outermost GroupEnd cost 117 ns against 67.
// A rank stopped inside a grouped call, or between queueing its ops and the group's end,
// shows them as joined, as a rank stopped inside an ungrouped call always did.
#include <algorithm>
#include <atomic>
#include <vector>

#include "preload/hooks/hot_path.h"
#include "preload/observe/nccl_observer.h"
#include "preload/observe/nccl_observer_internal.h"

namespace ncclwatch::preload {
namespace {

// A simulated group's records, taken back: per communicator they are its newest, from the
// first of its ranges (one per stream) on.
void RetractAll(const std::vector<StreamRange>& ranges) {
  for (auto it = ranges.begin(); it != ranges.end(); ++it) {
    auto same_comm = [&](const StreamRange& other) { return other.comm == it->comm; };
    if (std::any_of(ranges.begin(), it, same_comm)) continue;  // retracted with an earlier range
    uint64_t first = it->range.first_ring_index;
    for (auto other = it; other != ranges.end(); ++other) {
      if (same_comm(*other)) first = std::min(first, other->range.first_ring_index);
    }
    it->comm->slot.Retract(first);
  }
}

}  // namespace

NCCLWATCH_HOT uint64_t NextGroupKey() {
  static std::atomic<uint64_t> launched{0};
  return launched.fetch_add(1, std::memory_order_relaxed) + 1;
}

void AddGroupRange(ThreadState* ts, const StreamRange& records) {
  for (StreamRange& range : ts->group_ranges) {
    if (range.comm == records.comm && range.stream == records.stream) {
      range.range.Extend(records.range);
      return;
    }
  }
  ts->group_ranges.push_back(records);
}

NCCLWATCH_HOT void EndOutermostGroup(GroupEndKind kind, ncclResult_t result) noexcept {
  AtOutermostGroupEnd("EndOutermostGroup", [&](Runtime* rt, ThreadState* ts) {
    if (ts->group_range.comm != nullptr) ts->group_ranges.push_back(ts->group_range);
    ts->group_range.comm = nullptr;
    if (kind == GroupEndKind::kLaunch) {
      SettleAll(rt, ts->group_ranges.data(), ts->group_ranges.size(), result);
    } else {
      RetractAll(ts->group_ranges);  // nothing was launched
    }
    ts->group_ranges.clear();
    for (CommEntry* entry : ts->grouped_inits) SettleGroupedInit(rt, entry, result);
    ts->grouped_inits.clear();
  });
}

}  // namespace ncclwatch::preload
