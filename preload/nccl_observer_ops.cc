// Collectives, P2P and one-sided ops: one ring record each, and its completion.
#include <mutex>
#include <vector>

#include "core/shm/hook_clock.h"
#include "preload/call_sites.h"
#include "preload/hot_path.h"
#include "preload/nccl_observer.h"
#include "preload/nccl_observer_internal.h"

namespace ncclwatch::preload {
namespace {

// AddFlags, TrackCompletion and SettleRecords are inlined into EndOp (one op) and SettleAll
// (a group's ranges): as a chain of calls EndOp -> Settle -> TrackCompletion their prologues and
// epilogues cost about 30 of the 420 instructions of a hooked collective (callgrind; issue 23).
#define NCCLWATCH_HOT_INLINE NCCLWATCH_HOT inline __attribute__((always_inline))

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

NCCLWATCH_HOT bool BeginOp(ncclComm_t comm, const shm::OpFingerprint& op, OpCall* call) noexcept {
  return BeginObserved(Activation::kIfActive, "BeginOp", [&](Runtime* rt, ThreadState* ts) {
    call->runtime = rt;
    call->thread = ts;
    call->op = op;
    call->comm = rt->comms.Find(Handle(comm));
    call->enqueue_ns = shm::HookClockNowNs();
    if (call->comm != nullptr && ThisThreadDepths().group == 0) {
      call->record = call->comm->slot.Append(op, 0, call->enqueue_ns);
      call->published = true;
      if (call->comm->call_sites != nullptr) [[unlikely]] call_sites::Note(call->comm->call_sites, call->record, op.root_or_peer);
    }
  });
}

NCCLWATCH_HOT void EndOp(OpCall* call, ncclResult_t result) noexcept {
  --ThisThreadDepths().reentry;
  if (call->comm == nullptr) return;
  Guarded("EndOp", [&] {
    if (!call->published) {  // inside a group: NCCL enqueues at the outermost GroupEnd
      if (result == ncclSuccess || result == ncclInProgress) {
        call->thread->grouped_ops.push_back({call->comm, call->op, call->enqueue_ns});
      }
      return;
    }
    SettleRecords(call->runtime, {call->comm, call->op.stream, RecordRange::Of(call->record)}, result);
  });
}

}  // namespace ncclwatch::preload
