#include "core/detect/p2p_waits.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/detect/completion.h"

namespace ncclwatch::detect {
namespace {

// One rank's P2P ops by (direction, peer): the highest number posted and each kept record.
struct PostedOps {
  std::map<std::pair<P2PDirection, int>, uint64_t> highest;
  std::map<std::tuple<P2PDirection, int, uint64_t>, const RecordFacts*> by_seq;
};

PostedOps IndexPosted(const CommFacts& comm) {
  PostedOps index;
  for (const RecordFacts& r : comm.p2p_records) {
    const P2PDirection direction = P2PDirectionOf(r.op);
    if (direction == P2PDirection::kNone || r.seq == 0) continue;  // seq 0: peer table full, unmatched
    uint64_t& highest = index.highest[{direction, r.peer}];
    highest = std::max(highest, r.seq);
    index.by_seq.emplace(std::tuple(direction, r.peer, r.seq), &r);
  }
  return index;
}

// Members are sorted by rank, one per rank (comm_group.h): O(log members).
const CommMember* MemberOfRank(const CommGroup& group, int rank) {
  auto it = std::lower_bound(group.members.begin(), group.members.end(), rank,
                             [](const CommMember& m, int r) { return m.rank() < r; });
  return it != group.members.end() && it->rank() == rank ? &*it : nullptr;
}

// Whether `comm` saw complete some op (P2P or collective) issued after `since_ns`.
bool CompletedAfter(const CommFacts& comm, uint64_t since_ns) {
  for (const auto* records : {&comm.p2p_records, &comm.records}) {
    for (const RecordFacts& r : *records) {
      if (r.enqueue_ns > since_ns && r.complete_ns != 0 && !r.untracked) return true;
    }
  }
  return false;
}

const char* OppositeOpName(const RecordFacts& op) {
  if (op.op == "Send") return "Recv";
  if (op.op == "Recv") return "Send";
  if (op.op == "WaitSignal") return "Signal";
  return "WaitSignal";  // PutSignal, Signal
}

}  // namespace

std::vector<P2PWait> FindP2PWaits(const RuleContext& context) {
  const CommGroup& group = context.group;
  // By rank, for members with P2P records only: a collective-only job of 2^20 ranks costs
  // one pass over its members here.
  std::map<int, PostedOps> posted;
  for (const CommMember& member : group.members) {
    if (!member.comm->p2p_records.empty()) posted.emplace(member.rank(), IndexPosted(*member.comm));
  }
  if (posted.empty()) return {};
  static const PostedOps kNothingPosted;

  std::vector<P2PWait> waits;
  for (const CommMember& member : group.members) {
    if (!member.alive() || member.comm->p2p_records.empty()) continue;
    // The oldest pending op of each (peer, direction).
    std::map<std::pair<int, P2PDirection>, const RecordFacts*> oldest;
    for (const RecordFacts& r : member.comm->p2p_records) {
      const P2PDirection direction = P2PDirectionOf(r.op);
      if (direction == P2PDirection::kNone || r.seq == 0 || r.peer < 0 || r.peer >= group.nranks ||
          r.peer == member.rank()) {
        continue;
      }
      if (P2PStateOf(r, *member.comm) != P2PState::kPending || QueuedBehindPending(r, *member.comm)) continue;
      const RecordFacts*& slot = oldest[{r.peer, direction}];
      if (slot == nullptr || r.seq < slot->seq) slot = &r;
    }
    for (const auto& [key, op] : oldest) {
      P2PWait wait;
      wait.waiter = &member;
      wait.op = op;
      wait.peer_rank = key.first;
      wait.direction = key.second;
      wait.peer = MemberOfRank(group, wait.peer_rank);
      if (wait.peer != nullptr) {
        auto found = posted.find(wait.peer_rank);
        const PostedOps& theirs = found != posted.end() ? found->second : kNothingPosted;
        const P2PDirection wanted = Opposite(wait.direction);
        auto highest = theirs.highest.find({wanted, member.rank()});
        wait.peer_posted = highest != theirs.highest.end() && highest->second >= op->seq;
        auto match = theirs.by_seq.find(std::tuple(wanted, member.rank(), op->seq));
        if (match != theirs.by_seq.end()) wait.match = match->second;
        wait.match_queued = wait.match != nullptr && QueuedBehindPending(*wait.match, *wait.peer->comm);
        wait.peer_moved_on = !wait.peer_posted && op->enqueue_ns != 0 &&
                             wait.peer->process->host == member.process->host &&
                             CompletedAfter(*wait.peer->comm, op->enqueue_ns);
      }
      // P2P ops have no cadence of their own: the configured threshold, never the adaptive one.
      std::optional<uint64_t> since;
      if (op->enqueue_ns != 0) since = op->enqueue_ns;
      wait.overdue = context.Overdue(since, context.config.stall_threshold_ns);
      waits.push_back(wait);
    }
  }
  return waits;
}

P2PEvidence PostedEvidence(const P2PWait& wait) {
  P2PEvidence out;
  out.rank = wait.waiter->rank();
  out.op = wait.op->op;
  out.peer = wait.peer_rank;
  out.seq = wait.op->seq;
  out.posted = true;
  out.complete = false;
  out.count = wait.op->count;
  out.datatype = wait.op->datatype;
  out.enqueue_ns = wait.op->enqueue_ns;
  return out;
}

P2PEvidence PeerEvidence(const P2PWait& wait) {
  P2PEvidence out;
  out.rank = wait.peer_rank;
  out.peer = wait.waiter->rank();
  out.seq = wait.op->seq;
  out.posted = wait.peer_posted;
  if (wait.match != nullptr) {
    out.op = wait.match->op;
    out.count = wait.match->count;
    out.datatype = wait.match->datatype;
    out.enqueue_ns = wait.match->enqueue_ns;
    out.complete = P2PStateOf(*wait.match, *wait.peer->comm) == P2PState::kComplete;
  } else {
    out.op = OppositeOpName(*wait.op);
  }
  return out;
}

std::string DescribeP2POp(const P2PEvidence& op) {
  const bool sends = P2PDirectionOf(op.op) == P2PDirection::kSend;
  return op.op + " #" + std::to_string(op.seq) + (sends ? " to rank " : " from rank ") + std::to_string(op.peer);
}

}  // namespace ncclwatch::detect
