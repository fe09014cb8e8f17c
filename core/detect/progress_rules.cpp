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

}  // namespace

std::optional<Verdict> CheckStraggler(const RuleContext& context) {
  const CommGroup& group = context.group;
  if (group.members.size() < 2) return std::nullopt;
  uint64_t seq = MinLastEnqueued(group) + 1;
  std::optional<uint64_t> onset;
  bool live_leader_waits = false;
  for (const CommMember& member : group.members) {
    if (member.comm->last_enqueued_seq < seq) continue;
    live_leader_waits |= member.alive() && member.comm->last_completed_seq < seq;
    std::optional<uint64_t> joined = EnqueueTimeAtOrAfter(*member.comm, seq);
    if (joined && (!onset || *joined < *onset)) onset = joined;
  }
  if (!live_leader_waits || !onset) return std::nullopt;
  if (Age(context.now_ns, *onset) <= context.stall_ns) return std::nullopt;

  Verdict verdict = StartVerdict(VerdictKind::kStraggler, group, seq);
  for (const CommMember& member : group.members) {
    bool joined = member.comm->last_enqueued_seq >= seq;
    (joined ? verdict.other_ranks : verdict.culprit_ranks).push_back(member.rank());
  }
  verdict.since_ns = *onset;
  verdict.summary = "straggler on comm " + FormatHash(group.comm_hash) + ": rank(s) " +
                    FormatRanks(verdict.culprit_ranks) + " have not joined #" +
                    std::to_string(seq) + (verdict.op.empty() ? "" : " " + verdict.op) +
                    "; rank(s) " + FormatRanks(verdict.other_ranks) + " joined it " +
                    FormatSeconds(Age(context.now_ns, *onset)) + " ago";
  if (group.partial()) {
    verdict.notes.push_back("only visible ranks are judged; ranks on other hosts may lag too");
  }
  return verdict;
}

std::optional<Verdict> CheckCollectiveHang(const RuleContext& context) {
  const CommGroup& group = context.group;
  uint64_t seq = MinLastCompleted(group) + 1;
  if (MinLastEnqueued(group) < seq) return std::nullopt;  // not everyone joined #seq
  std::optional<uint64_t> all_joined;
  bool live_rank_waits = false;
  for (const CommMember& member : group.members) {
    live_rank_waits |= member.alive() && member.comm->last_completed_seq < seq;
    std::optional<uint64_t> joined = EnqueueTimeAtOrAfter(*member.comm, seq);
    if (joined && (!all_joined || *joined > *all_joined)) all_joined = joined;
  }
  if (!live_rank_waits || !all_joined) return std::nullopt;
  uint64_t threshold = IsLoneRank(group)
                           ? LoneRankThreshold(*group.members[0].comm, context.stall_ns,
                                               context.config)
                           : context.stall_ns;
  if (Age(context.now_ns, *all_joined) <= threshold) return std::nullopt;

  Verdict verdict = StartVerdict(VerdictKind::kCollectiveHang, group, seq);
  for (const CommMember& member : group.members) {
    bool done = member.comm->last_completed_seq >= seq;
    (done ? verdict.other_ranks : verdict.culprit_ranks).push_back(member.rank());
  }
  verdict.since_ns = *all_joined;
  verdict.summary = "collective_hang on comm " + FormatHash(group.comm_hash) + ": #" +
                    std::to_string(seq) + (verdict.op.empty() ? "" : " " + verdict.op) +
                    " joined by all " + std::to_string(group.members.size()) +
                    " visible rank(s) has not completed after " +
                    FormatSeconds(Age(context.now_ns, *all_joined)) + " on rank(s) " +
                    FormatRanks(verdict.culprit_ranks);
  if (group.partial()) verdict.notes.push_back(RemoteCauseNote(group));
  if (threshold != context.stall_ns) {
    verdict.notes.push_back("lone-rank threshold " + FormatSeconds(threshold) +
                            " (lone_rank_factor x median interval)");
  }
  return verdict;
}

}  // namespace ncclwatch::detect
