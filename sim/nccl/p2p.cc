// Send/Recv over one single-chunk channel per ordered rank pair. All the P2P operations
// of a group progress together, so a ring of sends and receives cannot deadlock, while a
// lone send still blocks until its receiver has taken every byte (rendezvous).
#include <algorithm>
#include <cstring>
#include <vector>

#include "ops.h"
#include "reduction.h"

namespace ncclsim {
namespace {

struct Transfer {
  const Op* op;
  size_t bytes;
  size_t done = 0;       // bytes written (send) or read (recv)
  bool started = false;  // at least one chunk moved (zero-byte messages too)
  bool finished = false;
};

// Sender side: fill the slot when it is empty; finished once the receiver took all.
bool AdvanceSend(Comm* c, Transfer* t) {
  P2pChannel* ch = c->segment->channel(c->rank, t->op->root);
  const uint64_t posted = ch->posted.load(std::memory_order_acquire);
  const uint64_t consumed = ch->consumed.load(std::memory_order_acquire);
  if (posted != consumed) return false;
  if (t->started && t->done == t->bytes) {
    t->finished = true;
    return true;
  }
  const size_t n = std::min(kP2pBytes, t->bytes - t->done);
  std::memcpy(c->segment->p2p_buffer(c->rank, t->op->root),
              static_cast<const unsigned char*>(t->op->send) + t->done, n);
  ch->message_bytes = t->bytes;
  ch->chunk_bytes = n;
  t->done += n;
  t->started = true;
  ch->posted.store(posted + 1, std::memory_order_release);
  Ring(c, t->op->root);
  return true;
}

bool AdvanceRecv(Comm* c, Transfer* t) {
  const int peer = t->op->root;
  P2pChannel* ch = c->segment->channel(peer, c->rank);
  const uint64_t posted = ch->posted.load(std::memory_order_acquire);
  const uint64_t consumed = ch->consumed.load(std::memory_order_acquire);
  // A size mismatch never matches: the pair hangs, like a mismatched collective.
  if (posted == consumed || ch->message_bytes != t->bytes) return false;
  std::memcpy(static_cast<unsigned char*>(t->op->recv) + t->done, c->segment->p2p_buffer(peer, c->rank),
              ch->chunk_bytes);
  t->done += ch->chunk_bytes;
  t->started = true;
  ch->consumed.store(consumed + 1, std::memory_order_release);
  Ring(c, peer);
  if (t->done == t->bytes) t->finished = true;
  return true;
}

// Only the oldest unfinished transfer per (direction, peer) may use its channel.
bool IsHeadOfChannel(const std::vector<Transfer>& all, size_t i) {
  for (size_t j = 0; j < i; ++j)
    if (!all[j].finished && all[j].op->kind == all[i].op->kind && all[j].op->root == all[i].op->root)
      return false;
  return true;
}

}  // namespace

bool ExecuteP2p(Comm* c, const Op* const* ops, size_t n) {
  // Faults come before any byte moves, so a hung Send or Recv also stalls its peer.
  for (size_t i = 0; i < n; ++i) MarkFaultError(*ops[i]);
  for (size_t i = 0; i < n; ++i)
    if (!ApplyFaults(*ops[i])) return false;
  std::vector<Transfer> transfers;
  for (size_t i = 0; i < n; ++i)
    transfers.push_back(Transfer{ops[i], ops[i]->count * DataTypeSize(ops[i]->datatype)});
  auto* bell = &c->segment->slot(c->rank)->doorbell;
  for (;;) {
    const uint32_t seen = bell->load(std::memory_order_acquire);
    bool progressed = false, all_done = true;
    for (size_t i = 0; i < transfers.size(); ++i) {
      Transfer& t = transfers[i];
      if (t.finished) continue;
      if (IsHeadOfChannel(transfers, i))
        progressed |= t.op->kind == CollKind::kSend ? AdvanceSend(c, &t) : AdvanceRecv(c, &t);
      all_done &= t.finished;
    }
    if (all_done) return true;
    if (!progressed && !WaitFor(c, [&] { return bell->load() != seen; })) return false;
  }
}

}  // namespace ncclsim
