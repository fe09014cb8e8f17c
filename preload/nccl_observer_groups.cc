// ncclGroupStart / ncclGroupEnd / ncclGroupSimulateEnd: ops and inits issued inside a group
// are published at the outermost GroupEnd, when NCCL launches them.
#include <atomic>
#include <vector>

#include "preload/call_sites.h"
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

// Which outermost GroupEnd launched a record: 1, 2, ... never repeating (CommSlot::Append's
// group_key, which counts a group's collectives on a communicator as one launch).
NCCLWATCH_HOT uint64_t NextGroupKey() {
  static std::atomic<uint64_t> launched{0};
  return launched.fetch_add(1, std::memory_order_relaxed) + 1;
}
// Its serial in the record's flags: 1..65535, wrapping (layout.h, kRecordGroupShift).
inline uint32_t GroupSerialOfKey(uint64_t key) { return static_cast<uint32_t>((key - 1) % 0xffffu) + 1; }

}  // namespace

// The group depth is counted even while ncclwatch is inert (group_depth.h): hence no
// BeginObserved here.
NCCLWATCH_HOT bool BeginGroupEnd(GroupEndKind kind, GroupCall* call) noexcept {
  if (PassThroughOnly()) return false;
  HookDepths& depths = ThisThreadDepths();
  if (depths.reentry > 0) return false;
  ++depths.reentry;
  call->runtime = ActiveRuntime();
  call->outermost = depths.group == 1;
  if (!call->outermost || call->runtime == nullptr) return true;
  Guarded("BeginGroupEnd", [&] {
    ThreadState* ts = ThisThread(call->runtime->generation);
    call->thread = ts;
    ts->group_ranges.clear();
    if (kind == GroupEndKind::kLaunch) {
      // Published before the launch, so that a rank stuck inside GroupEnd shows its ops.
      const uint64_t group_key = NextGroupKey();
      const uint32_t flags = shm::kRecordInGroup | shm::RecordGroupBits(GroupSerialOfKey(group_key));
      uint32_t site = call_sites::kNotCaptured;  // one capture for the group's ops
      auto publish = [&](const GroupedOp& g) {
        const shm::RecordRef ref = g.comm->slot.Append(g.op, flags, g.enqueue_ns, group_key);
        if (g.comm->call_sites != nullptr) [[unlikely]] call_sites::Note(g.comm->call_sites, ref, g.op.root_or_peer, &site);
        return ref;
      };
      if (ts->grouped_ops.size() == 1) {
        const GroupedOp& g = ts->grouped_ops.front();
        call->single = {g.comm, g.op.stream, RecordRange::Of(publish(g))};
        call->single_range = true;
      } else {
        for (const GroupedOp& g : ts->grouped_ops) AddToRanges(&ts->group_ranges, g.comm, g.op.stream, publish(g));
      }
    }
    // GroupSimulateEnd launches nothing: its ops are dropped, no seq is consumed.
    ts->grouped_ops.clear();
  });
  return true;
}

NCCLWATCH_HOT void EndGroupEnd(GroupCall* call, ncclResult_t result) noexcept {
  HookDepths& depths = ThisThreadDepths();
  --depths.reentry;
  // NCCL leaves the group level even when the end fails.
  if (depths.group > 0) --depths.group;
  if (!call->outermost) return;
  // A communicator created inside the group may have activated ncclwatch meanwhile.
  Runtime* rt = call->runtime != nullptr ? call->runtime : ActiveRuntime();
  if (rt == nullptr || PassThroughOnly()) return;
  Guarded("EndGroupEnd", [&] {
    // The thread's state as BeginGroupEnd found it, unless the runtime came up in between.
    ThreadState* ts = call->thread != nullptr && call->runtime == rt ? call->thread : ThisThread(rt->generation);
    if (call->single_range) {
      SettleAll(rt, &call->single, 1, result);
    } else {
      SettleAll(rt, ts->group_ranges.data(), ts->group_ranges.size(), result);
      ts->group_ranges.clear();
    }
    for (CommEntry* entry : ts->grouped_inits) SettleGroupedInit(rt, entry, result);
    ts->grouped_inits.clear();
  });
}

}  // namespace ncclwatch::preload
