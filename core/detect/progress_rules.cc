// Rules for kinds "straggler" and "collective_hang": see comm_rules.h.
#include <algorithm>

#include "core/detect/cadence.h"
#include "core/detect/comm_rules.h"
#include "core/detect/evidence.h"

namespace ncclwatch::detect {
namespace {

uint64_t MinLastEnqueued(const CommGroup& group) {
  uint64_t lowest = UINT64_MAX;
  for (const CommMember& m : group.members) lowest = std::min(lowest, m.comm->last_enqueued_seq);
  return lowest;
}

uint64_t MinLastCompleted(const CommGroup& group) {
  uint64_t lowest = UINT64_MAX;
  for (const CommMember& m : group.members) lowest = std::min(lowest, m.comm->last_completed_seq);
  return lowest;
}

bool IsLoneRank(const CommGroup& group) {
  return group.members.size() == 1 && group.nranks > 1;
}

// Offline, ranks without a dump are not known to have joined anything: when every rank
// with a dump joined #seq, they are the ones it waits for.
bool BlamesRanksWithoutFacts(const RuleContext& context) {
  return context.offline() && context.group.partial();
}

std::string RemoteCauseNote(const CommGroup& group) {
  if (IsLoneRank(group)) {
    return "only rank " + std::to_string(group.members[0].rank()) + " of " +
           std::to_string(group.nranks) +
           " is on this host: the cause is likely remote (a rank that has not joined, or the "
           "transport); compare with the other hosts";
  }
  return "all visible ranks joined; ranks on other hosts may not have joined, or the "
         "transport is stuck";
}

std::string OpSuffix(const Verdict& verdict) { return verdict.op.empty() ? "" : " " + verdict.op; }

// Every rank with facts joined #seq, a live one still waits in it, and some ranks have
// no facts (offline only): those are the stragglers.
std::optional<Verdict> StragglerWithoutFacts(const RuleContext& context, uint64_t seq) {
  const CommGroup& group = context.group;
  bool live_waits = false;
  for (const CommMember& member : group.members) {
    live_waits |= member.waits() && member.comm->last_completed_seq < seq;
  }
  if (!live_waits) return std::nullopt;
  Verdict verdict = StartVerdict(VerdictKind::kStraggler, group, seq);
  for (const CommMember& member : group.members) {
    if (member.comm->last_completed_seq < seq) verdict.other_ranks.push_back(member.rank());
  }
  verdict.culprits_without_facts = group.NotVisibleRanges();
  verdict.summary = "straggler on comm " + FormatHash(group.comm_hash) + ": " +
                    FormatRanksVerb(verdict.other_ranks, "waits", "wait") + " in #" + std::to_string(seq) +
                    OpSuffix(verdict) + "; " + FormatRanks(verdict.culprits_without_facts) +
                    (format::CountRanks(verdict.culprits_without_facts) == 1
                         ? " left no dump and is not known to have joined it"
                         : " left no dump and are not known to have joined it");
  return verdict;
}

}  // namespace

std::optional<Verdict> CheckStraggler(const RuleContext& context) {
  const CommGroup& group = context.group;
  // #seq is the oldest collective a live rank waits in. Ranks that never issued it are the
  // stragglers. (In a consistent state this is also the lowest last-issued + 1; offline,
  // dumps taken moments apart can hold a rank whose dump predates its peers' later
  // collectives, and the oldest wait is what the job is stuck on.)
  uint64_t seq = 0;
  for (const CommMember& member : group.members) {
    if (!member.waits()) continue;
    const uint64_t pending = member.comm->last_completed_seq + 1;
    if (seq == 0 || pending < seq) seq = pending;
  }
  if (seq == 0) return std::nullopt;
  std::optional<uint64_t> onset;
  bool some_lag = false;
  for (const CommMember& member : group.members) {
    if (member.comm->last_enqueued_seq < seq) {
      some_lag = true;
      continue;
    }
    std::optional<uint64_t> joined = EnqueueTimeAtOrAfter(*member.comm, seq);
    if (joined && (!onset || *joined < *onset)) onset = joined;
  }
  if (!some_lag) {
    // Every rank with facts issued #seq; offline, the ranks without a dump may not have.
    return BlamesRanksWithoutFacts(context) ? StragglerWithoutFacts(context, seq) : std::nullopt;
  }
  if (!context.Overdue(onset, context.stall_ns)) return std::nullopt;

  Verdict verdict = StartVerdict(VerdictKind::kStraggler, group, seq);
  for (const CommMember& member : group.members) {
    bool joined = member.comm->last_enqueued_seq >= seq;
    (joined ? verdict.other_ranks : verdict.culprit_ranks).push_back(member.rank());
  }
  verdict.since_ns = onset.value_or(0);
  verdict.summary = "straggler on comm " + FormatHash(group.comm_hash) + ": " +
                    FormatRanksVerb(verdict.culprit_ranks, "has", "have") + " not joined #" +
                    std::to_string(seq) + OpSuffix(verdict) + "; " +
                    FormatRanks(verdict.other_ranks) + " joined it" +
                    (context.offline() ? "" : " " + FormatDuration(Age(context.now_ns, verdict.since_ns)) + " ago");
  if (group.partial()) {
    verdict.notes.push_back(context.offline() ? "only ranks with a dump are judged; ranks without one may lag too"
                                              : "only visible ranks are judged; ranks on other hosts may lag too");
  }
  return verdict;
}

std::optional<Verdict> CheckCollectiveHang(const RuleContext& context) {
  const CommGroup& group = context.group;
  if (group.members.empty() || BlamesRanksWithoutFacts(context)) return std::nullopt;
  uint64_t seq = MinLastCompleted(group) + 1;
  if (MinLastEnqueued(group) < seq) return std::nullopt;  // not everyone joined #seq
  std::optional<uint64_t> all_joined;
  bool live_rank_waits = false;
  for (const CommMember& member : group.members) {
    live_rank_waits |= member.waits() && member.comm->last_completed_seq < seq;
    std::optional<uint64_t> joined = EnqueueTimeAtOrAfter(*member.comm, seq);
    if (joined && (!all_joined || *joined > *all_joined)) all_joined = joined;
  }
  if (!live_rank_waits) return std::nullopt;
  uint64_t threshold = IsLoneRank(group) && !context.offline()
                           ? LoneRankThreshold(*group.members[0].comm, context.stall_ns, context.config)
                           : context.stall_ns;
  if (!context.Overdue(all_joined, threshold)) return std::nullopt;

  Verdict verdict = StartVerdict(VerdictKind::kCollectiveHang, group, seq);
  // Live, with ranks on other hosts: every rank here joined #seq, so the cause is not here (a
  // remote rank that has not joined, or the transport). The ranks here are the waiting victims;
  // the ranks it waits for are named, never blamed for what cannot be seen.
  const bool waits_on_remote = group.partial() && !context.offline();
  for (const CommMember& member : group.members) {
    bool done = member.comm->last_completed_seq >= seq;
    (done || waits_on_remote ? verdict.other_ranks : verdict.culprit_ranks).push_back(member.rank());
  }
  verdict.since_ns = all_joined.value_or(0);
  const std::string stuck = "collective_hang on comm " + FormatHash(group.comm_hash) + ": #" +
                            std::to_string(seq) + OpSuffix(verdict) + " joined by " +
                            (group.members.size() == 1 ? "the only " : "all ") +
                            (context.offline() ? CountOf(group.members.size(), "rank", "ranks") + " with a dump"
                                               : CountOf(group.members.size(), "visible rank", "visible ranks")) +
                            " has not completed" +
                            (context.offline() ? "" : " after " + FormatDuration(Age(context.now_ns, verdict.since_ns)));
  if (waits_on_remote) {
    verdict.culprits_without_facts = group.NotVisibleRanges();
    verdict.summary = stuck + "; " + FormatRanksVerb(verdict.other_ranks, "waits", "wait") + " on " +
                      FormatRanks(verdict.culprits_without_facts) + " on other hosts";
  } else {
    verdict.summary = stuck + " on " + FormatRanks(verdict.culprit_ranks);
  }
  if (group.partial()) verdict.notes.push_back(RemoteCauseNote(group));
  if (threshold != context.stall_ns) {
    verdict.notes.push_back("lone-rank threshold " + FormatDuration(threshold) +
                            " (lone_rank_factor x median interval)");
  }
  return verdict;
}

}  // namespace ncclwatch::detect
