// Rules for kinds "p2p_mismatch", "p2p_deadlock", "p2p_straggler" and "p2p_hang": see
// comm_rules.h and core/detect/README.md.
#include <algorithm>
#include <map>
#include <set>

#include "core/detect/comm_rules.h"
#include "core/detect/evidence.h"
#include "core/detect/p2p_waits.h"

namespace ncclwatch::detect {
namespace {

// Evidence of at most this many waits is listed: an all-to-all over 1024 ranks has a million.
constexpr size_t kMaxListedWaits = 16;

std::string ForHowLong(const RuleContext& context, uint64_t since_ns) {
  if (context.offline() || since_ns == 0) return "";
  return " for " + FormatDuration(Age(context.now_ns, since_ns));
}

std::string DescribeWait(const RuleContext& context, const P2PWait& wait) {
  return "rank " + std::to_string(wait.waiter->rank()) + " waits in " + DescribeP2POp(PostedEvidence(wait)) +
         ForHowLong(context, wait.op->enqueue_ns);
}

// Overdue waits on a peer that has not started the matching op: the edges of the wait-for graph.
bool WaitsOnPeer(const P2PWait& wait) { return wait.overdue && PeerHasNotStarted(wait); }
// Overdue waits whose peer has not posted the matching op at all.
bool WaitsOnUnposted(const P2PWait& wait) { return wait.overdue && !wait.peer_posted; }

// Oldest wait first (then by waiter and peer: FindP2PWaits' order): the verdict names the wait
// that began the trouble, e.g. a stage's Recv before the Send it issued after it.
void OldestFirst(std::vector<const P2PWait*>& waits) {
  std::stable_sort(waits.begin(), waits.end(), [](const P2PWait* a, const P2PWait* b) {
    return a->op->enqueue_ns < b->op->enqueue_ns;
  });
}

std::vector<int> SortedUnique(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

void AddAbsenceNote(const P2PWait& wait, Verdict& verdict) {
  if (wait.peer == nullptr || wait.peer->alive()) return;
  const std::string rank = "rank " + std::to_string(wait.peer_rank);
  verdict.notes.push_back(wait.peer->process->alive ? rank + " left the communicator (destroyed, aborted or revoked)"
                                                    : rank + "'s process is gone");
}

// A cycle in the graph rank -> peer it waits on (peer has not posted), as the list of waits
// along it, lowest rank first; empty when there is none.
std::vector<const P2PWait*> FindCycle(const std::vector<P2PWait>& waits) {
  std::map<int, std::vector<const P2PWait*>> out_edges;
  for (const P2PWait& wait : waits) {
    // A peer that went on past the op it owes is no part of a cycle: it skipped the op.
    if (WaitsOnPeer(wait) && wait.peer != nullptr && !wait.peer_moved_on) {
      out_edges[wait.waiter->rank()].push_back(&wait);
    }
  }
  // Iterative depth-first search: a hostile dump set may chain 2^20 ranks, too deep to recurse.
  std::map<int, int> color;  // 0 unvisited, 1 on the current path, 2 done
  std::vector<const P2PWait*> path;                // edges taken from the root
  std::vector<std::pair<int, size_t>> stack;       // (rank, next out-edge to try)
  std::vector<const P2PWait*> cycle;
  for (const auto& [root, root_edges] : out_edges) {
    if (color[root] != 0) continue;
    stack.push_back({root, 0});
    color[root] = 1;
    while (!stack.empty() && cycle.empty()) {
      auto& [rank, next_edge] = stack.back();
      const std::vector<const P2PWait*>& edges = out_edges[rank];
      if (next_edge == edges.size()) {
        color[rank] = 2;
        stack.pop_back();
        if (!path.empty()) path.pop_back();
        continue;
      }
      const P2PWait* edge = edges[next_edge++];
      const int next = edge->peer_rank;
      if (color[next] == 1) {
        path.push_back(edge);
        auto first = std::find_if(path.begin(), path.end(), [next](const P2PWait* w) { return w->waiter->rank() == next; });
        cycle.assign(first, path.end());
      } else if (color[next] == 0) {
        path.push_back(edge);
        color[next] = 1;
        stack.push_back({next, 0});
      }
    }
    if (!cycle.empty()) break;
  }
  if (cycle.empty()) return cycle;
  auto lowest = std::min_element(cycle.begin(), cycle.end(),
                                 [](const P2PWait* a, const P2PWait* b) { return a->waiter->rank() < b->waiter->rank(); });
  std::rotate(cycle.begin(), lowest, cycle.end());
  return cycle;
}

Verdict StartP2PVerdict(VerdictKind kind, const RuleContext& context, const P2PWait& first) {
  Verdict verdict = StartVerdict(kind, context.group, 0);
  verdict.seq = first.op->seq;
  verdict.framework_seq = first.op->framework_seq;
  verdict.op = first.op->op;
  verdict.since_ns = first.op->enqueue_ns;
  return verdict;
}

}  // namespace

std::optional<Verdict> CheckP2PMismatch(const RuleContext& context) {
  for (const P2PWait& wait : FindP2PWaits(context)) {
    const RecordFacts* match = wait.match;
    if (match == nullptr || (match->count == wait.op->count && match->datatype == wait.op->datatype)) continue;
    Verdict verdict = StartP2PVerdict(VerdictKind::kP2PMismatch, context, wait);
    verdict.culprit_ranks = SortedUnique({wait.waiter->rank(), wait.peer_rank});
    const P2PEvidence mine = PostedEvidence(wait);
    const P2PEvidence theirs = PeerEvidence(wait);
    verdict.p2p = {mine, theirs};
    auto shape = [](const P2PEvidence& e) {
      return "(count=" + std::to_string(e.count) + ", datatype=" + format::DataTypeName(e.datatype) + ")";
    };
    verdict.summary = "p2p_mismatch on comm " + FormatHash(context.group.comm_hash) + ": rank " +
                      std::to_string(mine.rank) + " " + DescribeP2POp(mine) + shape(mine) + " but rank " +
                      std::to_string(theirs.rank) + " " + DescribeP2POp(theirs) + shape(theirs);
    return verdict;
  }
  return std::nullopt;
}

std::optional<Verdict> CheckP2PDeadlock(const RuleContext& context) {
  const std::vector<P2PWait> waits = FindP2PWaits(context);
  const std::vector<const P2PWait*> cycle = FindCycle(waits);
  if (cycle.empty()) return std::nullopt;
  Verdict verdict = StartP2PVerdict(VerdictKind::kP2PDeadlock, context, *cycle.front());
  std::string ring;
  std::string ops;
  size_t listed = 0;
  for (const P2PWait* wait : cycle) {
    verdict.culprit_ranks.push_back(wait->waiter->rank());
    if (wait->op->enqueue_ns != 0 && (verdict.since_ns == 0 || wait->op->enqueue_ns > verdict.since_ns)) {
      verdict.since_ns = wait->op->enqueue_ns;  // the cycle closed when its last wait began
    }
    if (listed++ >= kMaxListedWaits) continue;  // a cycle may run through 2^20 ranks
    verdict.p2p.push_back(PostedEvidence(*wait));
    ring += "rank " + std::to_string(wait->waiter->rank()) + " -> ";
    ops += (ops.empty() ? "" : ", ") + DescribeWait(context, *wait);
  }
  if (listed > kMaxListedWaits) {
    ring += "... (" + std::to_string(listed - kMaxListedWaits) + " more) -> ";
    ops += ", ...";
  }
  ring += "rank " + std::to_string(cycle.front()->waiter->rank());
  verdict.culprit_ranks = SortedUnique(verdict.culprit_ranks);
  verdict.summary = "p2p_deadlock on comm " + FormatHash(context.group.comm_hash) + ": cycle " + ring + ": " + ops +
                    "; each waits on a peer that waits on it, so none will post the op the other waits for";
  verdict.notes.push_back("a schedule bug: e.g. both stages receive before they send; post the sends first, or "
                          "put each pair's send and receive in one ncclGroupStart/End (batch_isend_irecv)");
  return verdict;
}

std::optional<Verdict> CheckP2PStraggler(const RuleContext& context) {
  const std::vector<P2PWait> waits = FindP2PWaits(context);
  // Ranks that wait themselves on an op not posted, overdue or not yet: victims, not culprits
  // (a rank whose wait is young may be closing a cycle: wait until it is overdue too).
  std::set<int> waiting;
  std::set<int> overdue_waiters;
  for (const P2PWait& wait : waits) {
    if (PeerHasNotStarted(wait)) waiting.insert(wait.waiter->rank());
    if (WaitsOnPeer(wait)) overdue_waiters.insert(wait.waiter->rank());
  }
  // Waits on a rank that waits on nobody, or that went on past the op it owes.
  std::vector<const P2PWait*> blamed;
  for (const P2PWait& wait : waits) {
    if (!WaitsOnUnposted(wait) || (waiting.count(wait.peer_rank) && !wait.peer_moved_on)) continue;
    if (wait.peer == nullptr && !context.offline()) continue;  // on another host: may run fine
    blamed.push_back(&wait);
  }
  if (blamed.empty()) return std::nullopt;
  OldestFirst(blamed);
  Verdict verdict = StartP2PVerdict(VerdictKind::kP2PStraggler, context, *blamed.front());
  std::vector<int> culprits;
  std::vector<int> victims;
  std::vector<format::RankRange> without_facts;
  std::string waits_text;
  size_t listed = 0;
  for (const P2PWait* wait : blamed) {
    if (wait->peer != nullptr) {
      culprits.push_back(wait->peer_rank);
    } else {
      without_facts.push_back({wait->peer_rank, wait->peer_rank});
    }
    if (wait->op->enqueue_ns != 0 && wait->op->enqueue_ns < verdict.since_ns) verdict.since_ns = wait->op->enqueue_ns;
    if (listed++ < kMaxListedWaits) {
      verdict.p2p.push_back(PeerEvidence(*wait));
      verdict.p2p.push_back(PostedEvidence(*wait));
      waits_text += (waits_text.empty() ? "" : "; ") + DescribeWait(context, *wait);
    }
    if (listed <= kMaxListedWaits) AddAbsenceNote(*wait, verdict);
  }
  // Every rank overdue in a wait on an op not posted is a victim, down every chain.
  victims.assign(overdue_waiters.begin(), overdue_waiters.end());
  verdict.culprit_ranks = SortedUnique(culprits);
  for (int rank : verdict.culprit_ranks) std::erase(victims, rank);
  verdict.other_ranks = SortedUnique(victims);
  std::sort(without_facts.begin(), without_facts.end(), [](auto& a, auto& b) { return a.first < b.first; });
  without_facts.erase(std::unique(without_facts.begin(), without_facts.end(),
                                  [](auto& a, auto& b) { return a.first == b.first; }),
                      without_facts.end());
  verdict.culprits_without_facts = without_facts;
  std::string culprits_text = FormatRanks(verdict.culprit_ranks);
  if (!without_facts.empty()) {
    culprits_text = (verdict.culprit_ranks.empty() ? "" : culprits_text + " and ") + "ranks without a dump " +
                    format::FormatRangeList(without_facts);
  }
  const bool one = verdict.culprit_ranks.size() + format::CountRanks(without_facts) == 1;
  verdict.summary = "p2p_straggler on comm " + FormatHash(context.group.comm_hash) + ": " + culprits_text +
                    (one ? " has not posted the op its peers wait for: "
                         : " have not posted the ops their peers wait for: ") +
                    waits_text;
  if (listed > kMaxListedWaits) verdict.summary += "; and " + std::to_string(listed - kMaxListedWaits) + " more";
  return verdict;
}

std::optional<Verdict> CheckP2PHang(const RuleContext& context) {
  const std::vector<P2PWait> waits = FindP2PWaits(context);
  std::vector<const P2PWait*> hung;
  for (const P2PWait& wait : waits) {
    if (wait.overdue && wait.peer_posted && !wait.match_queued && wait.peer != nullptr) hung.push_back(&wait);
  }
  if (hung.empty()) return std::nullopt;
  OldestFirst(hung);
  const P2PWait& first = *hung.front();
  Verdict verdict = StartP2PVerdict(VerdictKind::kP2PHang, context, first);
  verdict.culprit_ranks = SortedUnique({first.waiter->rank(), first.peer_rank});
  const P2PEvidence mine = PostedEvidence(first);
  const P2PEvidence theirs = PeerEvidence(first);
  verdict.p2p = {mine, theirs};
  std::set<std::pair<int, int>> pairs;
  for (const P2PWait* wait : hung) pairs.insert(std::minmax(wait->waiter->rank(), wait->peer_rank));
  verdict.summary = "p2p_hang on comm " + FormatHash(context.group.comm_hash) + ": rank " + std::to_string(mine.rank) +
                    " " + DescribeP2POp(mine) + " and rank " + std::to_string(theirs.rank) + " " +
                    DescribeP2POp(theirs) + " were both posted and " +
                    (theirs.complete ? "only rank " + std::to_string(theirs.rank) + "'s completed"
                                     : std::string("neither completed")) +
                    ForHowLong(context, mine.enqueue_ns);
  if (pairs.size() > 1) {
    verdict.notes.push_back(CountOf(pairs.size() - 1, "other pair", "other pairs") + " of posted ops " +
                            std::string(format::Agree(pairs.size() - 1, "has", "have")) + " not completed either");
  }
  verdict.notes.push_back("both sides posted their ops: the transport between these ranks is stuck (check "
                          "NCCL_P2P_DISABLE / NCCL_SHM_DISABLE / NCCL_NET, the link, or a peer stuck in a kernel)");
  return verdict;
}

}  // namespace ncclwatch::detect
