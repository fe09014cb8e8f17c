#include "core/detect/detector.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "core/detect/cadence.h"
#include "core/detect/comm_group.h"
#include "core/detect/comm_rules.h"
#include "core/detect/evidence.h"
#include "core/detect/replay_state.h"
#include "core/detect/stale_id_rule.h"
#include "core/detect/sync_rule.h"

namespace ncclwatch::detect {
namespace {

std::optional<Verdict> MostImportantCollective(const RuleContext& context) {
  for (auto rule : {CheckMismatch, CheckRankExited, CheckInitHang}) {
    if (std::optional<Verdict> verdict = rule(context)) return verdict;
  }
  std::optional<Verdict> straggler = CheckStraggler(context);
  std::optional<Verdict> hang = CheckCollectiveHang(context);
  if (straggler && hang && hang->seq < straggler->seq) {
    hang->notes.push_back(FormatRanksVerb(straggler->culprit_ranks, "has", "have") +
                          " not joined the later #" + std::to_string(straggler->seq) +
                          ", likely because of this hang");
    return hang;
  }
  return straggler ? straggler : hang;
}

std::optional<Verdict> MostImportantP2P(const RuleContext& context) {
  for (auto rule : {CheckP2PMismatch, CheckP2PDeadlock, CheckP2PStraggler, CheckP2PHang}) {
    if (std::optional<Verdict> verdict = rule(context)) return verdict;
  }
  return std::nullopt;
}

std::optional<Verdict> MostImportantReplay(const RuleContext& context) {
  for (auto rule : {CheckReplayStraggler, CheckReplayHang}) {
    if (std::optional<Verdict> verdict = rule(context)) return verdict;
  }
  return std::nullopt;
}

// On how many ranks eager collective #seq was issued before replay `replay` of `graph` was
// launched (`eager_first`), and after it (`replay_first`), among ranks that kept both.
struct IssueOrder {
  std::vector<int> eager_first;
  std::vector<int> replay_first;
};
IssueOrder OrderOf(const CommGroup& group, uint64_t seq, uint64_t graph, uint64_t replay) {
  IssueOrder order;
  for (const CommMember& member : group.members) {
    const RecordFacts* eager = FindRecord(*member.comm, seq);
    const ReplayFacts* launch = FindReplay(*member.comm, graph, replay);
    if (eager == nullptr || launch == nullptr || eager->enqueue_ns == 0 || launch->enqueue_ns == 0) continue;
    (eager->enqueue_ns < launch->enqueue_ns ? order.eager_first : order.replay_first).push_back(member.rank());
  }
  return order;
}

// A collective verdict and a replay verdict of one communicator: ops of one communicator run in
// the order a rank issued them, so the wait issued later is stuck behind the earlier one, which
// is reported with a note naming the other. When no rank kept both, or ranks issued them in
// different orders, the kinds' priority decides.
std::optional<Verdict> OlderOf(const CommGroup& group, Verdict collective, Verdict replay) {
  const IssueOrder order = OrderOf(group, collective.seq, replay.graph, replay.seq);
  const std::string eager = WaitSubject(collective.seq, collective.op, collective.framework_seq, false, "");
  if (!order.eager_first.empty() && order.replay_first.empty()) {
    collective.notes.push_back(ReplaySubject(replay) + " waits behind " + eager + ": " + FormatRanks(order.eager_first) +
                               " launched the replay after issuing #" + std::to_string(collective.seq));
    return collective;
  }
  if (order.eager_first.empty() && !order.replay_first.empty()) {
    replay.notes.push_back(eager + " waits behind " + ReplaySubject(replay) + ": " + FormatRanks(order.replay_first) +
                           " issued #" + std::to_string(collective.seq) + " after launching the replay");
    return replay;
  }
  return Priority(replay.kind) < Priority(collective.kind) ? replay : collective;
}

bool IsProgressKind(VerdictKind kind) { return kind == VerdictKind::kStraggler || kind == VerdictKind::kCollectiveHang; }

// Collectives and P2P ops of one communicator are judged apart (their numbers count apart);
// the more important kind is reported (verdict.h). A graph's replays are judged with the
// collectives (they are collectives, run again), in issue order against them.
std::optional<Verdict> MostImportantFor(const RuleContext& context) {
  std::optional<Verdict> collective = MostImportantCollective(context);
  if (!collective || IsProgressKind(collective->kind)) {
    std::optional<Verdict> replay = MostImportantReplay(context);
    if (replay) collective = collective ? OlderOf(context.group, std::move(*collective), std::move(*replay)) : replay;
  }
  std::optional<Verdict> p2p = MostImportantP2P(context);
  if (collective && p2p) return Priority(p2p->kind) < Priority(collective->kind) ? p2p : collective;
  return collective ? collective : p2p;
}

// Blocked syncs of the communicator's ranks explain what their host threads wait on.
void AddSyncNotes(const CommGroup& group, uint64_t now_ns, Verdict& verdict) {
  for (const CommMember& member : group.members) {
    if (std::optional<SyncFacts> sync = LongestBlockedSync(*member.process)) {
      verdict.notes.push_back(DescribeBlockedSync(member.rank(), *member.process, *sync, now_ns, group.scope));
    }
  }
}

// Priority, then the larger communicator (the world before its subgroups: offline the
// first verdict is the one reported), then hash and pid for a stable order.
// The first name a member's facts give (ranks of one communicator share it; a rank whose
// framework gave none has none).
std::string NameOf(const CommGroup& group) {
  for (const CommMember& member : group.members) {
    if (!member.comm->name.empty()) return member.comm->name;
  }
  return "";
}

bool ComesFirst(const Verdict& a, const Verdict& b) {
  return std::tuple(Priority(a.kind), -a.nranks, a.comm_hash, a.subject_pid) <
         std::tuple(Priority(b.kind), -b.nranks, b.comm_hash, b.subject_pid);
}

}  // namespace

std::vector<Verdict> Classify(const JobFacts& facts, const DetectConfig& config, uint64_t now_ns) {
  std::vector<Verdict> verdicts;
  std::set<const ProcessFacts*> explained;  // processes already covered by a comm verdict
  const std::vector<CommGroup> groups = GroupByComm(facts);
  // Judged across communicators first: a stale id is the cause of the init hangs of both the
  // communicator it names and the one its peers initialise meanwhile (stale_id_rule.h).
  StaleIdVerdicts stale = CheckStaleUniqueIds(facts, groups, config, now_ns);
  for (Verdict& verdict : stale.verdicts) {
    for (const CommGroup& group : groups) {
      if (group.comm_hash != verdict.comm_hash) continue;
      AddSyncNotes(group, now_ns, verdict);
      verdict.comm_name = NameOf(group);
    }
    verdicts.push_back(std::move(verdict));
  }
  for (const CommGroup& group : groups) {
    if (stale.explained.count(group.comm_hash) != 0) {
      for (const CommMember& member : group.members) explained.insert(member.process);
      continue;
    }
    RuleContext context{group, config, now_ns, StallThresholdFor(group, config)};
    std::optional<Verdict> verdict = MostImportantFor(context);
    if (!verdict) continue;
    AddSyncNotes(group, now_ns, *verdict);
    verdict->comm_name = NameOf(group);
    for (const CommMember& member : group.members) explained.insert(member.process);
    verdicts.push_back(std::move(*verdict));
  }
  for (const ProcessFacts& process : facts.processes) {
    if (explained.count(&process)) continue;
    if (std::optional<Verdict> verdict = CheckSyncStuck(process, config, now_ns, facts.scope)) {
      verdicts.push_back(std::move(*verdict));
    }
  }
  std::stable_sort(verdicts.begin(), verdicts.end(), ComesFirst);
  return verdicts;
}

}  // namespace ncclwatch::detect
