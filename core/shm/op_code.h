// The op codes a RingRecord carries (RingRecord::op) and what the record stage needs to know
// of them: which are counted per peer (and in which direction), and which fields of a record
// a given op uses. The detector's own taxonomy is core/detect/p2p_op.h, over op names;
// tests/p2p/p2p_rules_test.cc holds the two equal for every op code.
#ifndef NCCLWATCH_CORE_SHM_OP_CODE_H_
#define NCCLWATCH_CORE_SHM_OP_CODE_H_

#include <cstdint>

namespace ncclwatch::shm {

// Op codes of RingRecord::op. Broadcast and Bcast are one op, as in NCCL.
enum class Op : uint8_t {
  kNone = 0,
  kAllReduce = 1,
  kBroadcast = 2,
  kReduce = 3,
  kAllGather = 4,
  kReduceScatter = 5,
  kAlltoAll = 6,
  kGather = 7,
  kScatter = 8,
  kSend = 9,
  kRecv = 10,
  kPutSignal = 11,   // one-sided (NCCL 2.29): counted per peer like P2P, as sends
  kSignal = 12,
  kWaitSignal = 13,  // counted per peer as a recv
};
// Ops counted per peer (root_or_peer is the peer), outside the collective sequence.
inline constexpr bool IsPointToPoint(Op op) {
  return op == Op::kSend || op == Op::kRecv || op == Op::kPutSignal || op == Op::kSignal || op == Op::kWaitSignal;
}
// Of those, the ones counted as sends to the peer (the others count as receives).
inline constexpr bool IsSendLike(Op op) { return op == Op::kSend || op == Op::kPutSignal || op == Op::kSignal; }
// Whether a record's redop / root_or_peer field means a reduction op / a root for this op.
inline constexpr bool HasRedOp(Op op) { return op == Op::kAllReduce || op == Op::kReduce || op == Op::kReduceScatter; }
inline constexpr bool HasRoot(Op op) {
  return op == Op::kBroadcast || op == Op::kReduce || op == Op::kGather || op == Op::kScatter;
}
const char* OpName(Op op);

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_OP_CODE_H_
