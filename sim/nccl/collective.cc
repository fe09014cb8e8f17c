// Every collective runs as rounds over chunked per-rank staging buffers:
// each rank stages its part of the round, all ranks pass a step, each rank reads what
// it needs from the others' stages, and all pass another step before stages are reused.
#include <algorithm>
#include <cstring>
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

// Copies this rank's input into its stage; a PreMulSum op multiplies it by the scalar on the way.
void StageInput(const Op& op, unsigned char* stage, const unsigned char* in, size_t len) {
  if (op.premul) {
    ScaleInto(stage, in, len, op.datatype, op.premul->Scalar());
  } else {
    std::memcpy(stage, in, len * DataTypeSize(op.datatype));
  }
}

// The op that combines the staged inputs: a PreMulSum op sums what was pre-multiplied.
ncclRedOp_t CombiningOp(const Op& op) { return op.premul ? ncclSum : op.redop; }

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
      ReduceInto(out + off * es, inputs.data(), n, len, op.datatype, CombiningOp(op));
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

}  // namespace

bool ExecuteCollective(const Op& op) {
  Comm* c = op.comm;
  if (c->aborted.load()) return false;
  RankSlot* me = c->segment->slot(c->rank);
  me->signature = CollSignature{static_cast<int32_t>(op.kind), op.datatype, op.redop,
                                op.root, op.count};
  MarkFaultError(op);
  if (!Step(c)) return false;
  // Disagreeing calls at one position hang, as the real library would (or worse); under
  // mismatch_completes every rank passes one more step (so that no signature is overwritten
  // before all have compared them) and completes without moving data: the outputs keep
  // whatever they held, i.e. corrupt.
  if (!SignaturesAgree(c)) {
    if (MismatchCompletes(op)) return Step(c);
    WaitFor(c, [] { return false; });
    return false;
  }
  if (!ApplyFaults(op)) return false;

  const size_t es = DataTypeSize(op.datatype);
  const int segs = StagedSegments(op.kind, c->nranks);
  const size_t per_round = kStageBytes / (es * segs);
  const bool stages = Stages(op.kind, c->rank, op.root);
  const auto* in = static_cast<const unsigned char*>(op.send);
  for (size_t off = 0; off < op.count; off += per_round) {
    const size_t len = std::min(per_round, op.count - off);
    if (stages) {
      for (int s = 0; s < segs; ++s)
        StageInput(op, c->segment->stage(c->rank) + s * per_round * es, in + (s * op.count + off) * es, len);
    }
    if (!Step(c)) return false;
    ConsumeRound(op, off, len, per_round);
    if (!Step(c)) return false;
  }
  return true;
}

}  // namespace ncclsim
