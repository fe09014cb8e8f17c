// Rules for kinds "rank_exited" and "init_hang": see comm_rules.h.
#include <algorithm>

#include "core/detect/comm_rules.h"
#include "core/detect/evidence.h"

namespace ncclwatch::detect {
namespace {

// The oldest collective `member` waits on (its first incomplete #N).
uint64_t OldestPendingSeq(const CommMember& member) {
  return member.comm->last_completed_seq + 1;
}

// A live rank that has been waiting on an incomplete collective for at least `grace`.
// Unknown enqueue time counts as waiting (the record aged out: it is old).
bool IsWaiting(const CommMember& member, uint64_t now_ns, uint64_t grace) {
  if (!member.alive() || !member.has_pending()) return false;
  std::optional<uint64_t> since = EnqueueTimeAtOrAfter(*member.comm, OldestPendingSeq(member));
  return !since || Age(now_ns, *since) >= grace;
}

}  // namespace

std::optional<Verdict> CheckRankExited(const RuleContext& context) {
  const CommGroup& group = context.group;
  uint64_t grace = 2 * context.config.poll_interval_ns;
  std::vector<const CommMember*> waiters;
  uint64_t seq = 0;
  for (const CommMember& member : group.members) {
    if (!IsWaiting(member, context.now_ns, grace)) continue;
    waiters.push_back(&member);
    uint64_t pending = OldestPendingSeq(member);
    seq = seq == 0 ? pending : std::min(seq, pending);
  }
  if (waiters.empty()) return std::nullopt;

  Verdict verdict = StartVerdict(VerdictKind::kRankExited, group, seq);
  for (const CommMember& member : group.members) {
    // A dead rank that had already completed #seq did its part; it is not the cause.
    if (!member.alive() && member.comm->last_completed_seq < seq) {
      verdict.culprit_ranks.push_back(member.rank());
    }
  }
  if (verdict.culprit_ranks.empty()) return std::nullopt;
  for (const CommMember* waiter : waiters) verdict.other_ranks.push_back(waiter->rank());
  for (const CommMember* waiter : waiters) {
    std::optional<uint64_t> since = EnqueueTimeAtOrAfter(*waiter->comm, seq);
    if (since && (verdict.since_ns == 0 || *since < verdict.since_ns)) verdict.since_ns = *since;
  }
  verdict.summary = "rank_exited on comm " + FormatHash(group.comm_hash) + ": rank(s) " +
                    FormatRanks(verdict.culprit_ranks) + " exited while rank(s) " +
                    FormatRanks(verdict.other_ranks) + " wait in #" + std::to_string(seq) +
                    (verdict.op.empty() ? "" : " " + verdict.op);
  return verdict;
}

std::optional<Verdict> CheckInitHang(const RuleContext& context) {
  const CommGroup& group = context.group;
  Verdict verdict = StartVerdict(VerdictKind::kInitHang, group, 0);
  verdict.op = "init";
  // Init is collective: once one rank's init is older than the threshold, every rank still in
  // the same init is stuck with it, however much later it started (torch ranks start init up to
  // a few hundred ms apart). Naming only the oldest would blame one rank of a hang they share;
  // analyze names every rank whose init never finished, and both must agree.
  bool overdue = false;
  for (const CommMember& member : group.members) {
    const CommView& comm = *member.comm;
    const bool in_init = member.alive() && comm.init_done_ns == 0 && comm.init_started_ns != 0;
    if (!in_init) {
      verdict.other_ranks.push_back(member.rank());
      continue;
    }
    overdue = overdue || Age(context.now_ns, comm.init_started_ns) > context.config.stall_threshold_ns;
    verdict.culprit_ranks.push_back(member.rank());
    if (verdict.since_ns == 0 || comm.init_started_ns < verdict.since_ns) {
      verdict.since_ns = comm.init_started_ns;
    }
  }
  if (!overdue) return std::nullopt;
  if (verdict.culprit_ranks.empty()) return std::nullopt;
  verdict.summary = "init_hang on comm " + FormatHash(group.comm_hash) + ": init of rank(s) " +
                    FormatRanks(verdict.culprit_ranks) + " not finished after " +
                    FormatSeconds(Age(context.now_ns, verdict.since_ns));
  if (group.partial()) {
    verdict.notes.push_back(
        "init waits for every rank: ranks not visible here may never have called init");
  }
  return verdict;
}

}  // namespace ncclwatch::detect
