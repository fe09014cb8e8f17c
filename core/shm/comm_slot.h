// Writer-side view of one communicator's slot in a segment (see layout.h).
//
// Threads that call NCCL on the communicator publish its identity and append records;
// the tracker thread alone marks records completed. No locks, allocations or system calls.
#ifndef NCCLWATCH_CORE_SHM_COMM_SLOT_H_
#define NCCLWATCH_CORE_SHM_COMM_SLOT_H_

#include <cstdint>

#include "core/shm/layout.h"
#include "core/shm/record_flags.h"

namespace ncclwatch::shm {

struct CommIdentity {
  uint64_t comm_hash = 0;
  uint64_t parent_hash = 0;
  int rank = -1;
  int nranks = -1;
  int device = -1;
  uint32_t flags = 0;  // kComm* bits
  PackedCommName name;  // ncclConfig_t.commName (PackCommName), all zero when none
};

// What identifies one NCCL call across ranks.
struct OpFingerprint {
  Op op = Op::kNone;
  uint8_t datatype = 0;  // ncclDataType_t
  uint8_t redop = 0;     // ncclRedOp_t (0 when the op has none)
  uint64_t count = 0;
  int32_t root_or_peer = -1;
  uint64_t stream = 0;
};

// One launch's replay of a CUDA graph's ops on this communicator (layout.h, ReplayRecord).
struct ReplayEntry {
  uint64_t graph = 0;   // the graph's key on this communicator
  uint64_t replay = 0;  // 1-based, per (graph key, communicator) in this process
  uint64_t first_seq = 0;            // #N of its first captured collective here, 0 when none
  uint64_t first_framework_seq = 0;  // that record's launch number (the framework's seq)
  uint32_t ops = 0;                  // ops of the graph on this communicator
  uint64_t op_codes = 0;             // AddReplayOpCode of the first kReplayOpCodes
  uint64_t stream = 0;               // the launch stream
};

// Where an appended record lives, so that it can be amended or completed later.
struct RecordRef {
  uint64_t ring_index = 0;
  uint64_t seq = 0;
  bool collective = false;
};

class CommSlot {
 public:
  CommSlot() = default;
  CommSlot(CommSlotHeader* header, RingRecord* ring, uint32_t ring_capacity, ReplayRingHeader* replays = nullptr)
      : header_(header), ring_(ring), mask_(ring_capacity - 1), next_record_(ring), replays_(replays) {}

  bool valid() const { return header_ != nullptr; }
  CommSlotHeader* header() const { return header_; }

  // Resets the slot for a communicator whose init is starting.
  void BeginInit(uint64_t handle, uint64_t now_ns);
  void PublishIdentity(const CommIdentity& identity);
  // `ok` picks kReady or kInitFailed.
  void FinishInit(bool ok, int result, uint64_t now_ns);
  void SetState(CommState state);
  void SetAsyncError(int result, uint64_t now_ns);
  void SetHandle(uint64_t handle);

  // Assigns the next collective seq, or the next per-peer P2P seq, and its launch number
  // (layout.h, collective_launches / p2p_launches), and publishes the record. `group_key`:
  // 0 for an op outside a group, else an id of the outermost ncclGroupEnd that launched it,
  // unique in the process (a 64-bit count, unlike the flags' 16-bit serial, never repeats):
  // consecutive collectives of one key share a launch (a group's, published as its ops are
  // issued: BeginOp in nccl_observer_ops.cc).
  RecordRef Append(const OpFingerprint& op, uint32_t flags, uint64_t enqueue_ns, uint64_t group_key = 0);
  // Asks for the lines the next Append and its completion event touch (the header's counters and
  // pins, the next record), so that after a pause their misses overlap the caller's other work
  // instead of following one another. No load: the addresses are the slot's own.
  void PrefetchForAppend() const {
    __builtin_prefetch(&header_->last_enqueued_seq, 1);
    __builtin_prefetch(&header_->generation, 1);
    __builtin_prefetch(next_record_, 1);
  }
  // Takes back the newest records, [first_ring_index, head): a group that
  // ncclGroupSimulateEnd ended, which NCCL never launched. Their collective and per-peer seqs
  // and launch numbers are given back, for the next ops to take as if these had never been
  // appended, and each is flagged kRecordNotLaunched first, for a reader that copied it
  // meanwhile. Only for the appending thread, and only while nothing else was appended since
  // (NCCL's rule that one communicator's calls never run concurrently guarantees it inside an
  // open group).
  void Retract(uint64_t first_ring_index);
  // Adds flags to a record this thread appended (e.g. kRecordFailed after the call); the
  // first kRecordUntracked on a record counts it in untracked_ops. A failed record takes no
  // kRecordUntracked or kRecordInProgress: it owes no completion.
  void AddFlags(const RecordRef& ref, uint32_t flags);
  // Before the communicator is aborted or revoked: every record still pending (not complete,
  // owing a completion), graph replays included, is flagged kRecordAborted, so that the completion its event reports
  // when the abort tears the kernels down is never taken for the op's.
  void MarkPendingAborted();
  // The enqueue time of the oldest record or replay still pending (as MarkPendingAborted counts
  // them), 0 when none.
  uint64_t OldestPendingEnqueueNs() const;
  // Tracker only. Records whose ring slot was reused meanwhile are left alone.
  void MarkCompleted(const RecordRef& ref, uint64_t now_ns);
  // Marks records [first, last] (absolute ring indices) complete and advances the
  // completed collective seq to `max_collective_seq` (0: no collective among them). Aborted
  // records stay incomplete, and then the seq does not advance. Failed records (an op NCCL
  // refused between grouped ops it queued) stay incomplete: they never run.
  void MarkRangeCompleted(uint64_t first_ring_index, uint64_t last_ring_index, uint64_t max_collective_seq,
                          uint64_t now_ns);

  // Records [first, last] this thread appended were captured into a CUDA graph: they take no
  // framework number, as torch numbers no collective it captures (measured with torch 2.15: the
  // Flight Recorder's collective_seq_id of the next eager op is one past the last eager one's).
  // Their launch numbers are given back when they are the newest of their kind, and their
  // records keep none (framework_seq 0, unknown).
  void WithdrawLaunches(uint64_t first_ring_index, uint64_t last_ring_index);
  // The op of a record this thread appended, as Append stored it (the fingerprint, its seq and
  // launch number, and its flags); false when its place was reused.
  bool ReadOwnRecord(uint64_t ring_index, OpFingerprint* op, RecordRef* ref, uint64_t* launch, uint32_t* flags) const;

  // ---- CUDA graph replays (layout.h, ReplayRecord). A slot made without a replay ring
  // publishes none (AppendReplay returns UINT64_MAX and the others do nothing).
  // Publishes one launch's replay, not complete; returns its absolute ring index. The
  // launching thread only, like Append.
  uint64_t AppendReplay(const ReplayEntry& entry, uint64_t enqueue_ns);
  // Adds kRecord* flags to the replay at `ring_index` (kRecordFailed when the launch failed,
  // kRecordUntracked when no event could be recorded; the first untracked counts in
  // untracked_ops), unless its place was reused.
  void AddReplayFlags(uint64_t ring_index, uint32_t flags);
  // Tracker only: the replay at `ring_index` completed, unless its place was reused or it was
  // aborted.
  void MarkReplayCompleted(uint64_t ring_index, uint64_t now_ns);

  // The communicator now in the slot (BeginInit starts a new one).
  uint32_t generation() const { return header_->generation.load(std::memory_order_acquire); }
  // A completion event of generation `generation` was recorded / is done with (complete or
  // failed). Pins the slot: it is not reused while events are pending.
  void EventRecorded() { header_->events_pending.fetch_add(1, std::memory_order_acq_rel); }
  void EventReleased() { header_->events_pending.fetch_sub(1, std::memory_order_acq_rel); }
  // `ops` records will never be seen complete (no event, or a failed one).
  void CountUntracked(uint64_t ops) { header_->untracked_ops.fetch_add(ops, std::memory_order_relaxed); }
  // Tracker only: records [first, last] will never be seen complete (their event failed);
  // counts them in untracked_ops, but for the failed ones, which owed no completion.
  void CountRangeUntracked(uint64_t first_ring_index, uint64_t last_ring_index);

 private:
  PeerCounters* FindOrClaimPeer(int32_t peer);
  // Calls fn(ring_index, record) for each record in the ring not complete, owing a completion
  // and not yet aborted.
  template <typename Fn>
  void ForEachPending(Fn fn) const;
  // The same over the replay ring: fn(record) for each replay not complete and owing one.
  template <typename Fn>
  void ForEachPendingReplay(Fn fn) const;
  ReplayRecord* ReplayAt(uint64_t ring_index) const;

  CommSlotHeader* header_ = nullptr;
  RingRecord* ring_ = nullptr;
  uint64_t mask_ = 0;
  // The group_key of the last collective appended (0: ungrouped): in-process only, written by
  // the appending thread like the counters (BumpSingleWriter's rule).
  uint64_t last_group_key_ = 0;
  // Where the next Append writes (in-process, the appending thread's): PrefetchForAppend.
  const RingRecord* next_record_ = nullptr;
  ReplayRingHeader* replays_ = nullptr;  // followed by kReplayRingCapacity ReplayRecords
};

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_COMM_SLOT_H_
