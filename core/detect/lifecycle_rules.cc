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
// Unknown enqueue time counts as waiting (the record aged out: it is old); offline, a
// pending collective in a dump has waited long enough by definition.
bool IsWaiting(const CommMember& member, const RuleContext& context, uint64_t grace) {
  if (!member.waits()) return false;
  if (context.offline()) return true;
  std::optional<uint64_t> since = EnqueueTimeAtOrAfter(*member.comm, OldestPendingSeq(member));
  return !since || Age(context.now_ns, *since) >= grace;
}

// How each culprit left, as far as its facts tell.
void AddExitNotes(const CommGroup& group, Verdict& verdict) {
  for (const CommMember& member : group.members) {
    if (member.alive()) continue;
    if (std::find(verdict.culprit_ranks.begin(), verdict.culprit_ranks.end(), member.rank()) ==
        verdict.culprit_ranks.end()) {
      continue;
    }
    const std::string who = "rank " + std::to_string(member.rank());
    const ExitFacts& exit = member.process->exit;
    if (member.process->alive) {
      verdict.notes.push_back(who + " left the communicator (destroyed, finalized, aborted or revoked) after #" +
                              std::to_string(member.comm->last_completed_seq) + "; its process still runs");
    } else if (!exit.recorded) {
      verdict.notes.push_back(who + " died without recording an exit (killed or crashed) after #" +
                              std::to_string(member.comm->last_completed_seq));
    } else if (exit.signal != 0) {
      verdict.notes.push_back(who + " was terminated by signal " + std::to_string(exit.signal));
    } else {
      verdict.notes.push_back(who + " exited with status " + std::to_string(exit.status) + " after #" +
                              std::to_string(member.comm->last_completed_seq));
    }
  }
}

}  // namespace

std::optional<Verdict> CheckRankExited(const RuleContext& context) {
  const CommGroup& group = context.group;
  uint64_t grace = 2 * context.config.poll_interval_ns;
  std::vector<const CommMember*> waiters;
  uint64_t seq = 0;
  for (const CommMember& member : group.members) {
    if (!IsWaiting(member, context, grace)) continue;
    waiters.push_back(&member);
    uint64_t pending = OldestPendingSeq(member);
    seq = seq == 0 ? pending : std::min(seq, pending);
  }
  if (waiters.empty()) {
    std::optional<Verdict> in_replay = CheckRankExitedInReplay(context);
    if (in_replay) AddExitNotes(group, *in_replay);
    return in_replay;
  }

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
  verdict.summary = "rank_exited on comm " + FormatHash(group.comm_hash) + ": " +
                    FormatRanks(verdict.culprit_ranks) + " left while " +
                    FormatRanksVerb(verdict.other_ranks, "waits", "wait") + " in #" + std::to_string(seq) +
                    (verdict.op.empty() ? "" : " " + verdict.op);
  AddExitNotes(group, verdict);
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
    const CommFacts& comm = *member.comm;
    const bool in_init = member.alive() && comm.init_done_ns == 0 && comm.init_started_ns != 0;
    if (!in_init) {
      verdict.other_ranks.push_back(member.rank());
      continue;
    }
    overdue = overdue || context.Overdue(comm.init_started_ns, context.config.stall_threshold_ns);
    verdict.culprit_ranks.push_back(member.rank());
    if (verdict.since_ns == 0 || comm.init_started_ns < verdict.since_ns) {
      verdict.since_ns = comm.init_started_ns;
    }
  }
  if (!overdue) return std::nullopt;
  if (verdict.culprit_ranks.empty()) return std::nullopt;
  verdict.summary = "init_hang on comm " + FormatHash(group.comm_hash) + ": init of " +
                    FormatRanks(verdict.culprit_ranks) + " not finished" +
                    (context.offline() ? "" : " after " + FormatDuration(Age(context.now_ns, verdict.since_ns)));
  // Init is collective: offline, the ranks that never left a dump are the ones the others
  // wait for (they may never have called init at all); live, when every rank on this host is
  // still in init, so are the ranks on other hosts, and no rank here is blamed for them.
  const bool every_visible_rank_waits = verdict.other_ranks.empty();
  if (group.partial() && (context.offline() || every_visible_rank_waits)) {
    verdict.culprits_without_facts = group.NotVisibleRanges();
    verdict.other_ranks = std::move(verdict.culprit_ranks);
    verdict.culprit_ranks.clear();
    verdict.summary += (context.offline() ? "; no dump from "
                                          : "; " + FormatRanksVerb(verdict.other_ranks, "waits", "wait") + " on ") +
                       FormatRanks(verdict.culprits_without_facts) + (context.offline() ? "" : " on other hosts");
  }
  if (group.partial()) {
    verdict.notes.push_back(
        "init waits for every rank: ranks not visible here may never have called init");
  }
  return verdict;
}

}  // namespace ncclwatch::detect
