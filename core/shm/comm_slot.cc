#include "core/shm/comm_slot.h"

#include <algorithm>

#include "core/shm/record_flags.h"
#include "core/shm/seqlock.h"

namespace ncclwatch::shm {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

}  // namespace

void CommSlot::BeginInit(uint64_t handle, uint64_t now_ns) {
  CommSlotHeader& h = *header_;
  const uint32_t v = SeqlockWriteBegin(h.version);
  h.comm_hash.store(0, kRelaxed);
  h.parent_hash.store(0, kRelaxed);
  h.handle.store(handle, kRelaxed);
  h.rank.store(-1, kRelaxed);
  h.nranks.store(-1, kRelaxed);
  h.device.store(-1, kRelaxed);
  h.flags.store(0, kRelaxed);
  for (std::atomic<uint64_t>& word : h.name) word.store(0, kRelaxed);
  SeqlockWriteEnd(h.version, v);
  h.init_start_ns.store(now_ns, kRelaxed);
  h.init_done_ns.store(0, kRelaxed);
  h.init_result.store(0, kRelaxed);
  h.async_error.store(0, kRelaxed);
  h.async_error_ns.store(0, kRelaxed);
  h.last_enqueued_seq.store(0, kRelaxed);
  h.last_completed_seq.store(0, kRelaxed);
  h.last_completed_ns.store(0, kRelaxed);
  h.collective_launches.store(0, kRelaxed);
  h.p2p_launches.store(0, kRelaxed);
  last_group_key_ = 0;
  h.peers_overflowed.store(0, kRelaxed);
  for (PeerCounters& p : h.peers) {
    p.peer.store(-1, kRelaxed);
    p.sends.store(0, kRelaxed);
    p.recvs.store(0, kRelaxed);
  }
  h.peers_claimed.store(0, kRelaxed);
  h.untracked_ops.store(0, kRelaxed);
  h.generation.fetch_add(1, std::memory_order_acq_rel);
  // Records of a previous user of this slot stay in the ring but are hidden from readers,
  // which only look at the last records_written entries.
  h.records_written.store(0, kRelaxed);
  h.state.store(static_cast<uint32_t>(CommState::kInitializing), std::memory_order_release);
}

void CommSlot::PublishIdentity(const CommIdentity& id) {
  CommSlotHeader& h = *header_;
  const uint32_t v = SeqlockWriteBegin(h.version);
  h.comm_hash.store(id.comm_hash, kRelaxed);
  h.parent_hash.store(id.parent_hash, kRelaxed);
  h.rank.store(id.rank, kRelaxed);
  h.nranks.store(id.nranks, kRelaxed);
  h.device.store(id.device, kRelaxed);
  h.flags.store(id.flags, kRelaxed);
  StoreCommName(h, id.name);
  SeqlockWriteEnd(h.version, v);
}

void CommSlot::SetHandle(uint64_t handle) {
  CommSlotHeader& h = *header_;
  const uint32_t v = SeqlockWriteBegin(h.version);
  h.handle.store(handle, kRelaxed);
  SeqlockWriteEnd(h.version, v);
}

void CommSlot::FinishInit(bool ok, int result, uint64_t now_ns) {
  header_->init_result.store(result, kRelaxed);
  header_->init_done_ns.store(now_ns, kRelaxed);
  SetState(ok ? CommState::kReady : CommState::kInitFailed);
}

void CommSlot::SetState(CommState state) {
  header_->state.store(static_cast<uint32_t>(state), std::memory_order_release);
}

void CommSlot::SetAsyncError(int result, uint64_t now_ns) {
  if (header_->async_error.load(kRelaxed) == result) return;
  header_->async_error_ns.store(now_ns, kRelaxed);
  header_->async_error.store(result, std::memory_order_release);
}

PeerCounters* CommSlot::FindOrClaimPeer(int32_t peer) {
  CommSlotHeader& h = *header_;
  const uint32_t claimed = h.peers_claimed.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < claimed && i < kMaxPeers; ++i) {
    if (h.peers[i].peer.load(kRelaxed) == peer) return &h.peers[i];
  }
  const uint32_t index = h.peers_claimed.load(kRelaxed);
  if (index >= kMaxPeers) {
    h.peers_overflowed.fetch_add(1, kRelaxed);
    return nullptr;
  }
  h.peers[index].peer.store(peer, kRelaxed);
  h.peers_claimed.store(index + 1, std::memory_order_release);
  return &h.peers[index];
}

namespace {
// Counters only the appending thread writes: a load and a store, no locked read-modify-write
// (a lock prefix costs about 20 cycles per op). NCCL's calls on one communicator must not run concurrently (its thread-safety
// rule: "multiple threads should use separate communicator objects"), so the threads that
// append to one slot take turns, ordered by whatever serialises their NCCL calls; the peer
// table (FindOrClaimPeer) relied on this already. A job that broke the rule would break NCCL
// first; here it could at worst give two records one seq, never touch memory outside the slot.
uint64_t BumpSingleWriter(std::atomic<uint64_t>& counter) {
  const uint64_t before = counter.load(kRelaxed);
  counter.store(before + 1, kRelaxed);
  return before;
}
}  // namespace

// Hot: in .text.hot, next to the preload's hooks, which call it once per op.
__attribute__((hot)) RecordRef CommSlot::Append(const OpFingerprint& op, uint32_t flags, uint64_t enqueue_ns,
                                                uint64_t group_key) {
  CommSlotHeader& h = *header_;
  RecordRef ref;
  uint64_t launch;
  if (IsPointToPoint(op.op)) {
    PeerCounters* peer = FindOrClaimPeer(op.root_or_peer);
    if (peer != nullptr) ref.seq = BumpSingleWriter(IsSendLike(op.op) ? peer->sends : peer->recvs) + 1;
    launch = BumpSingleWriter(h.p2p_launches) + 1;
  } else {
    ref.collective = true;
    ref.seq = BumpSingleWriter(h.last_enqueued_seq) + 1;
    // A group's collectives on this communicator share one launch: only the first of them
    // takes a new one. They come one after another as the caller issues them (P2P ops of the
    // group may come between: they leave last_group_key_ alone).
    if (group_key == 0 || group_key != last_group_key_) {
      launch = BumpSingleWriter(h.collective_launches) + 1;
    } else {
      launch = h.collective_launches.load(kRelaxed);
    }
    last_group_key_ = group_key;
  }
  ref.ring_index = BumpSingleWriter(h.records_written);
  // The next op's record: its line is then in cache when that op comes, in a burst of ops
  // (a DDP step's buckets, an FSDP layer's gathers) as in the benchmark.
  __builtin_prefetch(&ring_[(ref.ring_index + 1) & mask_], 1);
  RingRecord& r = ring_[ref.ring_index & mask_];
  const uint32_t v = SeqlockWriteBegin(r.version);
  r.op_and_types.store(PackOpAndTypes(op.op, op.datatype, op.redop), kRelaxed);
  r.ring_index.store(ref.ring_index, kRelaxed);
  r.seq.store(ref.seq, kRelaxed);
  r.count_and_launch.store(PackCountAndLaunch(op.count, launch), kRelaxed);
  r.peer_and_flags.store(PackPeerAndFlags(op.root_or_peer, flags), kRelaxed);
  r.stream.store(op.stream, kRelaxed);
  r.enqueue_ns.store(enqueue_ns, kRelaxed);
  r.complete_ns.store(0, kRelaxed);
  SeqlockWriteEnd(r.version, v);
  return ref;
}

void CommSlot::Retract(uint64_t first_ring_index) {
  CommSlotHeader& h = *header_;
  const uint64_t head = h.records_written.load(kRelaxed);
  if (first_ring_index >= head || head - first_ring_index > mask_ + 1) return;
  for (uint64_t index = head; index-- > first_ring_index;) {
    RingRecord& r = ring_[index & mask_];
    if (r.ring_index.load(kRelaxed) != index) return;
    const Op op = UnpackOpAndTypes(r.op_and_types.load(kRelaxed)).op;
    const int32_t peer = UnpackPeerAndFlags(r.peer_and_flags.load(kRelaxed)).root_or_peer;
    const uint64_t seq = r.seq.load(kRelaxed);
    const uint32_t launch_low = UnpackCountAndLaunch(r.count_and_launch.load(kRelaxed)).launch_low;
    AddFlags({index, 0, false}, kRecordNotLaunched);
    // Each counter goes back to what it was before this record took its number (a group's
    // collectives share one launch: the oldest of them sets it last, to the same value).
    std::atomic<uint64_t>& launches = IsPointToPoint(op) ? h.p2p_launches : h.collective_launches;
    const uint64_t launch = RestoreLaunch(launch_low, launches.load(kRelaxed));
    if (launch > 0) launches.store(launch - 1, kRelaxed);
    if (!IsPointToPoint(op)) {
      h.last_enqueued_seq.store(seq - 1, kRelaxed);
    } else if (PeerCounters* counters = seq != 0 ? FindOrClaimPeer(peer) : nullptr) {
      // seq 0: the peer had no counters (peers_overflowed), nothing to give back.
      (IsSendLike(op) ? counters->sends : counters->recvs).store(seq - 1, kRelaxed);
    }
    h.records_written.store(index, std::memory_order_release);
  }
}

void CommSlot::AddFlags(const RecordRef& ref, uint32_t flags) {
  RingRecord& r = ring_[ref.ring_index & mask_];
  if (r.ring_index.load(kRelaxed) != ref.ring_index) return;
  const PeerAndFlags before = UnpackPeerAndFlags(r.peer_and_flags.load(kRelaxed));
  // A failed op owes no completion: a group's settle that could not track its range, or
  // deferred it, says nothing of the refused op inside it.
  if ((before.flags & kRecordFailed) != 0) flags &= ~(kRecordUntracked | kRecordInProgress);
  if (flags == 0) return;
  if ((flags & kRecordUntracked) != 0 && (before.flags & kRecordUntracked) == 0) CountUntracked(1);
  const uint32_t v = SeqlockWriteBegin(r.version);
  r.peer_and_flags.store(PackPeerAndFlags(before.root_or_peer, before.flags | flags), kRelaxed);
  SeqlockWriteEnd(r.version, v);
}

template <typename Fn>
void CommSlot::ForEachPending(Fn fn) const {
  const uint64_t written = header_->records_written.load(std::memory_order_acquire);
  const uint64_t kept = std::min<uint64_t>(written, mask_ + 1);
  for (uint64_t index = written - kept; index < written; ++index) {
    const RingRecord& r = ring_[index & mask_];
    if (r.ring_index.load(std::memory_order_acquire) != index || r.complete_ns.load(std::memory_order_acquire) != 0) {
      continue;
    }
    const uint32_t flags = UnpackPeerAndFlags(r.peer_and_flags.load(kRelaxed)).flags;
    if (OwesNoCompletion(flags) || (flags & kRecordAborted) != 0) continue;
    fn(index, r);
  }
}

void CommSlot::MarkPendingAborted() {
  ForEachPending([this](uint64_t index, const RingRecord&) {
    RecordRef ref;
    ref.ring_index = index;
    AddFlags(ref, kRecordAborted);
  });
}

uint64_t CommSlot::OldestPendingEnqueueNs() const {
  uint64_t oldest = 0;
  ForEachPending([&](uint64_t, const RingRecord& r) {
    const uint64_t enqueued = r.enqueue_ns.load(kRelaxed);
    if (oldest == 0 || (enqueued != 0 && enqueued < oldest)) oldest = enqueued;
  });
  return oldest;
}

void CommSlot::MarkCompleted(const RecordRef& ref, uint64_t now_ns) {
  MarkRangeCompleted(ref.ring_index, ref.ring_index, ref.collective ? ref.seq : 0, now_ns);
}

void CommSlot::CountRangeUntracked(uint64_t first_ring_index, uint64_t last_ring_index) {
  if (last_ring_index - first_ring_index > mask_) first_ring_index = last_ring_index - mask_;
  uint64_t owed = last_ring_index - first_ring_index + 1;
  for (uint64_t index = first_ring_index; index <= last_ring_index; ++index) {
    const RingRecord& r = ring_[index & mask_];
    if (r.ring_index.load(std::memory_order_acquire) != index) continue;  // overwritten: counted
    if ((UnpackPeerAndFlags(r.peer_and_flags.load(kRelaxed)).flags & kRecordFailed) != 0) --owed;
  }
  if (owed > 0) CountUntracked(owed);
}

void CommSlot::MarkRangeCompleted(uint64_t first_ring_index, uint64_t last_ring_index, uint64_t max_collective_seq,
                                  uint64_t now_ns) {
  // Only the newest ring_capacity indices can still be in the ring.
  if (last_ring_index - first_ring_index > mask_) first_ring_index = last_ring_index - mask_;
  bool aborted = false;
  for (uint64_t index = first_ring_index; index <= last_ring_index; ++index) {
    RingRecord& r = ring_[index & mask_];
    if (r.ring_index.load(std::memory_order_acquire) != index || r.complete_ns.load(kRelaxed) != 0) continue;
    const uint32_t flags = UnpackPeerAndFlags(r.peer_and_flags.load(std::memory_order_acquire)).flags;
    if ((flags & kRecordAborted) != 0) {
      aborted = true;
      continue;
    }
    if ((flags & kRecordFailed) != 0) continue;  // refused by NCCL inside a group: never runs
    r.complete_ns.store(now_ns, std::memory_order_release);
  }
  CommSlotHeader& h = *header_;
  if (!aborted && max_collective_seq > h.last_completed_seq.load(kRelaxed)) {
    h.last_completed_ns.store(now_ns, kRelaxed);
    h.last_completed_seq.store(max_collective_seq, std::memory_order_release);
  }
}

}  // namespace ncclwatch::shm
