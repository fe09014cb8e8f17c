// Every collective runs as rounds over chunked per-rank staging buffers:
// each rank stages its part of the round, all ranks pass a step, each rank reads what
// it needs from the others' stages, and all pass another step before stages are reused.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <unistd.h>
#include <vector>

#include "ops.h"
#include "reduction.h"

namespace ncclsim {
namespace {

// Number of per-rank segments a rank stages in each round (Broadcast/Scatter: root only).
int StagedSegments(CollKind k, int nranks) {
  return (k == CollKind::kReduceScatter || k == CollKind::kAlltoAll || k == CollKind::kScatter)
             ? nranks : 1;
}

bool Stages(CollKind k, int rank, int root) {
  return !((k == CollKind::kBroadcast || k == CollKind::kScatter) && rank != root);
}

// Publishes this rank's next step and waits for every rank to reach it.
bool Step(Comm* c) {
  const uint64_t target = ++c->phase;
  c->segment->slot(c->rank)->phase.store(target, std::memory_order_release);
  RingAll(c);
  return WaitFor(c, [&] {
    for (int r = 0; r < c->nranks; ++r)
      if (c->segment->slot(r)->phase.load(std::memory_order_acquire) < target) return false;
    return true;
  });
}

bool SignaturesAgree(Comm* c) {
  const CollSignature& mine = c->segment->slot(c->rank)->signature;
  for (int r = 0; r < c->nranks; ++r)
    if (!(c->segment->slot(r)->signature == mine)) return false;
  return true;
}

void ConsumeRound(const Op& op, size_t off, size_t len, size_t seg_elems) {
  Comm* c = op.comm;
  const size_t es = DataTypeSize(op.datatype);
  const int n = c->nranks, me = c->rank;
  auto* out = static_cast<unsigned char*>(op.recv);
  auto stage = [&](int r, int seg) { return c->segment->stage(r) + seg * seg_elems * es; };
  std::vector<const void*> inputs(static_cast<size_t>(n));
  switch (op.kind) {
    case CollKind::kAllReduce:
    case CollKind::kReduce:
    case CollKind::kReduceScatter: {
      if (op.kind == CollKind::kReduce && me != op.root) return;
      const int seg = op.kind == CollKind::kReduceScatter ? me : 0;
      for (int r = 0; r < n; ++r) inputs[r] = stage(r, seg);
      ReduceInto(out + off * es, inputs.data(), n, len, op.datatype, op.redop);
      return;
    }
    case CollKind::kBroadcast:
      std::memcpy(out + off * es, stage(op.root, 0), len * es);
      return;
    case CollKind::kAllGather:
    case CollKind::kGather:
      if (op.kind == CollKind::kGather && me != op.root) return;
      for (int r = 0; r < n; ++r) std::memcpy(out + (r * op.count + off) * es, stage(r, 0), len * es);
      return;
    case CollKind::kAlltoAll:
      for (int r = 0; r < n; ++r) std::memcpy(out + (r * op.count + off) * es, stage(r, me), len * es);
      return;
    case CollKind::kScatter:
      std::memcpy(out + off * es, stage(op.root, me), len * es);
      return;
    default:
      return;
  }
}

void SleepInterruptibly(Comm* c, int ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!c->aborted.load()) {
    // Rounded up, so the fault never ends early.
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return;
    WaitFor(c, [] { return false; }, static_cast<int>(left));
  }
}

}  // namespace

bool ExecuteCollective(const Op& op) {
  Comm* c = op.comm;
  if (c->aborted.load()) return false;
  const uint64_t seq = ++c->coll_seq;
  RankSlot* me = c->segment->slot(c->rank);
  me->signature = CollSignature{static_cast<int32_t>(op.kind), op.datatype, op.redop,
                                op.root, op.count};
  if (FindFault(c->faults, FaultKind::kError, c->index, c->rank, seq))
    c->async_error.store(ncclRemoteError);
  if (!Step(c)) return false;
  if (FindFault(c->faults, FaultKind::kDie, c->index, c->rank, seq)) kill(getpid(), SIGKILL);
  // Disagreeing calls at one position hang, as the real library would (or worse).
  if (FindFault(c->faults, FaultKind::kHang, c->index, c->rank, seq) || !SignaturesAgree(c)) {
    WaitFor(c, [] { return false; });
    return false;
  }
  if (const Fault* f = FindFault(c->faults, FaultKind::kSlow, c->index, c->rank, seq))
    SleepInterruptibly(c, f->ms);

  const size_t es = DataTypeSize(op.datatype);
  const int segs = StagedSegments(op.kind, c->nranks);
  const size_t per_round = kStageBytes / (es * segs);
  const bool stages = Stages(op.kind, c->rank, op.root);
  const auto* in = static_cast<const unsigned char*>(op.send);
  for (size_t off = 0; off < op.count; off += per_round) {
    const size_t len = std::min(per_round, op.count - off);
    if (stages) {
      for (int s = 0; s < segs; ++s)
        std::memcpy(c->segment->stage(c->rank) + s * per_round * es,
                    in + (s * op.count + off) * es, len * es);
    }
    if (!Step(c)) return false;
    ConsumeRound(op, off, len, per_round);
    if (!Step(c)) return false;
  }
  return true;
}

}  // namespace ncclsim
