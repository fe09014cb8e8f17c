// Collectives, P2P and one-sided ops: one ring record each, and its completion.
//
// Every op's record is appended before the real call (BeginOp), a grouped one with its group's
// key. After the call (EndOp) an op outside a group is settled: a completion event if NCCL
// accepted it, deferral while a nonblocking enqueue is in progress, the failed flag otherwise.
// A grouped op joins its group's ranges instead, settled at the group's outermost end
// (SettleGroupRange here, EndOutermostGroup in nccl_observer_groups.cc); one NCCL refused is
// flagged failed at once, and its group's settle never marks it complete or untracked.
#include <mutex>
#include <vector>

#include "core/shm/hook_clock.h"
#include "core/shm/record_flags.h"
#include "preload/call_sites/call_sites.h"
#include "preload/hooks/hot_path.h"
#include "preload/observe/nccl_observer.h"
#include "preload/observe/nccl_observer_internal.h"
#include "preload/tracker/tracker_record.h"

namespace ncclwatch::preload {
namespace {

// AddFlags, TrackCompletion and SettleRecords are inlined into EndOp (one op), SettleGroupRange
// and SettleAll (a group's ranges): as a chain of calls EndOp -> Settle -> TrackCompletion their
// prologues and epilogues cost about 30 of the 420 instructions of a hooked collective
// (callgrind).

NCCLWATCH_HOT_INLINE void AddFlags(const StreamRange& records, uint32_t flags) {
  if (flags == 0) return;
  for (uint64_t index = records.range.first_ring_index; index <= records.range.last_ring_index; ++index) {
    records.comm->slot.AddFlags({index, 0, false}, flags);
  }
}

NCCLWATCH_HOT_INLINE void TrackCompletion(Runtime* rt, const StreamRange& records) {
  uint32_t flags = shm::kRecordUntracked;
  if (rt->tracker) {
    const CompletionTarget target{&records.comm->slot, records.range};
    flags = rt->tracker->RecordCompletion(records.comm->device.load(std::memory_order_relaxed), records.stream,
                                          target);
  }
  AddFlags(records, flags);
}

[[gnu::cold]] void Defer(const StreamRange& records) {
  AddFlags(records, shm::kRecordInProgress);
  std::lock_guard<std::mutex> lock(records.comm->deferred_mu);
  records.comm->deferred.push_back(records);
}

NCCLWATCH_HOT_INLINE void SettleRecords(Runtime* rt, const StreamRange& records, ncclResult_t result) {
  if (result == ncclSuccess) [[likely]] {
    TrackCompletion(rt, records);
  } else if (result == ncclInProgress) {
    Defer(records);
  } else {
    AddFlags(records, shm::kRecordFailed);
  }
}

}  // namespace

NCCLWATCH_HOT void SettleAll(Runtime* rt, const StreamRange* ranges, size_t count, ncclResult_t result) {
  for (size_t i = 0; i < count; ++i) SettleRecords(rt, ranges[i], result);
}

void FlushDeferred(Runtime* rt, CommEntry* entry) {
  std::lock_guard<std::mutex> lock(entry->deferred_mu);
  for (const StreamRange& records : entry->deferred) TrackCompletion(rt, records);
  entry->deferred.clear();
}

NCCLWATCH_HOT bool BeginOp(ncclComm_t comm, OpCall* call) noexcept {
  return BeginObserved(Activation::kIfActive, "BeginOp", [&](Runtime* rt, ThreadState* ts) {
    call->runtime = rt;
    call->thread = ts;
    call->comm = rt->comms.Find(Handle(comm));
    const uint64_t enqueue_ns = shm::HookClockNowNs();
    if (call->comm == nullptr) return;
    HookDepths& depths = ThisThreadDepths();
    uint32_t flags = 0;
    uint64_t group_key = 0;
    if (depths.group > 0) {
      if (depths.group_key == 0) depths.group_key = NextGroupKey();
      group_key = depths.group_key;
      flags = GroupedRecordFlags(group_key);
    }
    call->record = call->comm->slot.Append(call->op, flags, enqueue_ns, group_key);
    if (call->comm->call_sites != nullptr) [[unlikely]] {
      call_sites::Note(call->comm->call_sites, call->record, call->op.root_or_peer);
    }
  });
}

NCCLWATCH_HOT void EndOp(OpCall* call, ncclResult_t result) noexcept {
  HookDepths& depths = ThisThreadDepths();
  --depths.reentry;
  if (call->comm == nullptr) return;
  Guarded("EndOp", [&] {
    const StreamRange records{call->comm, call->op.stream, RecordRange::Of(call->record)};
    if (depths.group == 0) [[likely]] {
      SettleRecords(call->runtime, records, result);
      return;
    }
    // NCCL queued it, to launch at the outermost end. One it refused joins the group's ranges
    // too, flagged failed: a simulated end takes it back with the rest, and a launch never
    // marks it complete (CommSlot::MarkRangeCompleted).
    if (result != ncclSuccess && result != ncclInProgress) AddFlags(records, shm::kRecordFailed);
    JoinGroup(call->thread, &depths, records);
  });
}

NCCLWATCH_HOT void SettleGroupRange(ncclResult_t result) noexcept {
  AtOutermostGroupEnd("SettleGroupRange", [&](Runtime* rt, ThreadState* ts) {
    const StreamRange records = ts->group_range;
    ts->group_range.comm = nullptr;
    if (records.comm != nullptr) SettleRecords(rt, records, result);  // null: a fork since the op
  });
}

}  // namespace ncclwatch::preload
