// Which ops are point-to-point, and in which direction: the one predicate by which the live
// facts (core/watch/facts_from_snapshot.h, from shm op codes through shm::OpName; the dump is
// built from those facts), the dump reader (core/dump/dump_json.cc) and the offline facts tell
// P2P ops apart, so they can never disagree on what a P2P op is. The record stage keeps its
// op-code twin (shm::IsPointToPoint / shm::IsSendLike, for the per-peer counters);
// tests/p2p/p2p_rules_test.cc holds the two equal for every op code.
#ifndef NCCLWATCH_CORE_DETECT_P2P_OP_H_
#define NCCLWATCH_CORE_DETECT_P2P_OP_H_

#include <string_view>

namespace ncclwatch::detect {

enum class P2PDirection {
  kNone,  // a collective (or an unknown op)
  kSend,  // Send, and the one-sided PutSignal / Signal (counted as sends to the peer)
  kRecv,  // Recv, and WaitSignal (counted as a receive from the peer)
};

P2PDirection P2PDirectionOf(std::string_view op);
inline bool IsPointToPoint(std::string_view op) { return P2PDirectionOf(op) != P2PDirection::kNone; }

// The direction a peer's op must have to match an op of `direction`.
inline P2PDirection Opposite(P2PDirection direction) {
  if (direction == P2PDirection::kSend) return P2PDirection::kRecv;
  if (direction == P2PDirection::kRecv) return P2PDirection::kSend;
  return P2PDirection::kNone;
}

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_P2P_OP_H_
