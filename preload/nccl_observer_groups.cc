// Ops issued inside ncclGroupStart/End: published when issued, settled at the outermost end.
//
// Each grouped op's record is appended as soon as NCCL has queued the op (PublishGroupedOp,
// from the op's hook), with the group's key, and its (communicator, stream) range is kept for
// the thread. The outermost ncclGroupEnd, which launches the group, records their completion
// events after it returned; ncclGroupSimulateEnd launches nothing, and its records are taken
// back (CommSlot::Retract): their seqs go to the next ops, as if never issued. The group's
// ends themselves only count depth (group_depth.h) unless the group published something.
//
// Before 2026-11-26 the ops were buffered and published by the outermost GroupEnd: a group of
// one op then cost 117 ns of our own time against 67 for the same op ungrouped, and its end
// alone about 30 ns with nothing to publish (scripts/bench --only hooks; issue 23). Published
// when issued, the records are the same; only a rank stopped between queueing grouped ops and
// the group's end now shows them as joined, as a rank stopped inside GroupEnd already did.
#include <algorithm>
#include <atomic>
#include <vector>

#include "preload/call_sites.h"
#include "preload/group_depth.h"
#include "preload/hot_path.h"
#include "preload/nccl_observer.h"
#include "preload/nccl_observer_internal.h"

namespace ncclwatch::preload {
namespace {

// Adds `ref` to the range of its (communicator, stream): a group's records on one stream
// complete together.
NCCLWATCH_HOT void AddToRanges(std::vector<StreamRange>* ranges, CommEntry* comm, uint64_t stream, const shm::RecordRef& ref) {
  for (StreamRange& records : *ranges) {
    if (records.comm == comm && records.stream == stream) {
      records.range.Extend(ref);
      return;
    }
  }
  ranges->push_back({comm, stream, RecordRange::Of(ref)});
}

// Which outermost group a record belongs to: 1, 2, ... never repeating (CommSlot::Append's
// group_key, which counts a group's collectives on a communicator as one launch).
NCCLWATCH_HOT uint64_t NextGroupKey() {
  static std::atomic<uint64_t> launched{0};
  return launched.fetch_add(1, std::memory_order_relaxed) + 1;
}
// Its serial in the record's flags: 1..65535, wrapping (layout.h, kRecordGroupShift).
inline uint32_t GroupSerialOfKey(uint64_t key) { return static_cast<uint32_t>((key - 1) % 0xffffu) + 1; }

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

NCCLWATCH_HOT void PublishGroupedOp(OpCall* call) {
  HookDepths& depths = ThisThreadDepths();
  if (depths.group_key == 0) depths.group_key = NextGroupKey();
  const uint32_t flags = shm::kRecordInGroup | shm::RecordGroupBits(GroupSerialOfKey(depths.group_key));
  const shm::RecordRef ref = call->comm->slot.Append(call->op, flags, call->enqueue_ns, depths.group_key);
  if (call->comm->call_sites != nullptr) [[unlikely]] call_sites::Note(call->comm->call_sites, ref, call->op.root_or_peer);
  AddToRanges(&call->thread->group_ranges, call->comm, call->op.stream, ref);
  depths.group_has_work = true;
}

NCCLWATCH_HOT void EndOutermostGroup(GroupEndKind kind, ncclResult_t result) noexcept {
  // A communicator created inside the group may have activated ncclwatch meanwhile.
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr || PassThroughOnly()) return;
  Guarded("EndOutermostGroup", [&] {
    ThreadState* ts = ThisThread(rt->generation);
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
