// Point-to-point ops matched in NCCL's order, per communicator and per ordered pair of ranks:
// the k-th Send from A to B matches the k-th Recv of B from A (P2P seq counts per peer and
// direction: facts.h). Each pending op of a live rank becomes one wait: what it waits in, and
// whether its peer has posted the matching op. The P2P rules (comm_rules.h) judge these.
#ifndef NCCLWATCH_CORE_DETECT_P2P_WAITS_H_
#define NCCLWATCH_CORE_DETECT_P2P_WAITS_H_

#include <cstdint>
#include <vector>

#include "core/detect/comm_rules.h"
#include "core/detect/p2p_op.h"

namespace ncclwatch::detect {

struct P2PWait {
  const CommMember* waiter = nullptr;
  // The waiter's oldest pending op of one direction towards one peer: NCCL matches in order,
  // so later ops of that pair and direction wait behind it.
  const RecordFacts* op = nullptr;
  P2PDirection direction = P2PDirection::kNone;
  int peer_rank = -1;
  const CommMember* peer = nullptr;   // nullptr: the peer rank has no facts (another host, no dump)
  bool peer_posted = false;           // the peer posted its op #seq towards the waiter
  const RecordFacts* match = nullptr; // that op, when the peer still keeps its record
  // That op is posted but queued on its stream behind an earlier pending op of the peer: the
  // peer waits in that earlier op before this one can start (QueuedBehindPending).
  bool match_queued = false;
  bool overdue = false;               // pending longer than the stall threshold (offline: always)
  // The peer has not posted the matching op but completed an op issued after the waiter's:
  // it went on past the op it owes (skipped it), so it is to blame even when it waits itself
  // by now (on ranks stuck behind this wait). Judged only when both ranks are on one host:
  // the clocks of different hosts are never compared.
  bool peer_moved_on = false;
};

// A wait on a peer: its op #seq is not posted, or queued behind another of the peer's waits.
inline bool PeerHasNotStarted(const P2PWait& wait) { return !wait.peer_posted || wait.match_queued; }

// Every wait of the group, ordered by (waiter rank, peer rank, direction). An op queued on its
// stream behind the waiter's own earlier pending op is no wait of its own (it waits for that one). O(R log R) over
// R P2P records in all: a hostile dump of millions of records stays cheap.
std::vector<P2PWait> FindP2PWaits(const RuleContext& context);

// What `wait.waiter` posted: its pending op.
P2PEvidence PostedEvidence(const P2PWait& wait);
// What the peer posted or owes towards the waiter: its op #seq in the opposite direction.
P2PEvidence PeerEvidence(const P2PWait& wait);

// "Recv #3 from rank 1", "Send #2 to rank 0".
std::string DescribeP2POp(const P2PEvidence& op);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_P2P_WAITS_H_
