// Rule for kind "stale_unique_id": see stale_id_rule.h.
#include "core/detect/stale_id_rule.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "core/detect/comm_rules.h"
#include "core/detect/evidence.h"

namespace ncclwatch::detect {
namespace {

// More new communicators than this in one summary would only repeat the point.
constexpr size_t kMaxNamedNewComms = 3;

bool IsRootInit(const CommFacts& comm) {
  return !comm.derived && comm.comm_hash != 0 && !comm.left() && comm.init_done_ns == 0 && comm.init_started_ns != 0;
}

std::string AttemptText(const Attempt& attempt) {
  std::string text;
  if (attempt.restart >= 0) text = "attempt " + std::to_string(attempt.restart);
  if (attempt.requeue >= 0) text += (text.empty() ? "" : " of ") + std::string("requeue ") + std::to_string(attempt.requeue);
  return text;
}

// "pid 812 (rank 0)": a process and its rank in the communicator.
std::string HolderText(const ProcessFacts& process, const CommFacts& comm) {
  return "pid " + std::to_string(process.pid) + " (rank " + std::to_string(comm.rank) + ")";
}

// The proof, if `used` (held by `other`) shows that `comm`'s hash was used up before `process`
// began this init; `strength` ranks the proofs in the order of stale_id_rule.h (0 strongest).
std::optional<std::string> ProofOf(const ProcessFacts& process, const CommFacts& comm, const ProcessFacts& other,
                                   const CommFacts& used, int* strength) {
  if (&used == &comm || used.comm_hash != comm.comm_hash || used.derived || used.init_done_ns == 0) return std::nullopt;
  if (&other == &process) {
    *strength = 0;
    if (used.init_done_ns >= comm.init_started_ns) return std::nullopt;  // one process, one clock
    return "this process initialised it before (rank " + std::to_string(used.rank) + ") and " +
           (used.left() ? "left it" : "still holds it");
  }
  if (EarlierAttempt(other.attempt, process.attempt)) {
    *strength = 1;
    return AttemptText(other.attempt) + " of the job used it: " + HolderText(other, used);
  }
  if (!other.alive && other.exit.exit_ns != 0 && other.host == process.host &&
      other.exit.exit_ns < comm.init_started_ns) {
    *strength = 2;
    return HolderText(other, used) + " initialised it and exited before this init began";
  }
  *strength = 3;
  if (used.left()) return HolderText(other, used) + " initialised it and has left it";
  return std::nullopt;
}

// How the facts prove that `comm`'s hash was used up before `process` began this init (the
// strongest proof), or nullopt.
std::optional<std::string> EarlierUse(const JobFacts& facts, const ProcessFacts& process, const CommFacts& comm) {
  std::optional<std::string> best;
  int best_strength = 0;
  for (const ProcessFacts& other : facts.processes) {
    for (const CommFacts& used : other.comms) {
      int strength = 0;
      std::optional<std::string> proof = ProofOf(process, comm, other, used, &strength);
      if (proof && (!best || strength < best_strength)) {
        best = std::move(proof);
        best_strength = strength;
      }
    }
  }
  return best;
}

struct StaleInit {
  const ProcessFacts* process;
  const CommFacts* comm;
  std::string earlier;
};

const CommGroup* GroupOf(const std::vector<CommGroup>& groups, uint64_t hash) {
  for (const CommGroup& group : groups) {
    if (group.comm_hash == hash) return &group;
  }
  return nullptr;
}

// The root communicators the peers of `stale` initialise meanwhile: same size, same name when
// both have one, held by live processes that are in no stale init themselves.
std::map<uint64_t, std::vector<int>> NewCommsBeside(const JobFacts& facts, const StaleInit& stale,
                                                    const std::set<const ProcessFacts*>& stale_processes) {
  std::map<uint64_t, std::vector<int>> out;  // hash -> ranks in its init
  for (const ProcessFacts& process : facts.processes) {
    if (!process.alive || stale_processes.count(&process) != 0 ||
        EarlierAttempt(process.attempt, stale.process->attempt)) {
      continue;
    }
    for (const CommFacts& comm : process.comms) {
      if (!IsRootInit(comm) || comm.comm_hash == stale.comm->comm_hash || comm.nranks != stale.comm->nranks) continue;
      if (!comm.name.empty() && !stale.comm->name.empty() && comm.name != stale.comm->name) continue;
      out[comm.comm_hash].push_back(comm.rank);
    }
  }
  return out;
}

}  // namespace

StaleIdVerdicts CheckStaleUniqueIds(const JobFacts& facts, const std::vector<CommGroup>& groups,
                                    const DetectConfig& config, uint64_t now_ns) {
  const bool offline = facts.scope == Scope::kJob;
  // Two polls, as for rank_exited: long enough that a rank still in its init is not one that
  // is leaving it together with its peers (milliseconds apart).
  const uint64_t grace = 2 * config.poll_interval_ns;
  std::map<uint64_t, std::vector<StaleInit>> by_hash;
  std::set<const ProcessFacts*> stale_processes;
  for (const ProcessFacts& process : facts.processes) {
    if (!process.alive) continue;
    for (const CommFacts& comm : process.comms) {
      if (!IsRootInit(comm) || (!offline && Age(now_ns, comm.init_started_ns) < grace)) continue;
      if (std::optional<std::string> earlier = EarlierUse(facts, process, comm)) {
        by_hash[comm.comm_hash].push_back(StaleInit{&process, &comm, std::move(*earlier)});
        stale_processes.insert(&process);
      }
    }
  }
  StaleIdVerdicts out;
  for (const auto& [hash, inits] : by_hash) {
    const CommGroup* group = GroupOf(groups, hash);
    if (group == nullptr) continue;  // every init above is in a group: GroupByComm keeps in-range ranks
    Verdict verdict = StartVerdict(VerdictKind::kStaleUniqueId, *group, 0);
    verdict.op = "init";
    for (const StaleInit& init : inits) {
      verdict.culprit_ranks.push_back(init.comm->rank);
      if (verdict.since_ns == 0 || init.comm->init_started_ns < verdict.since_ns) {
        verdict.since_ns = init.comm->init_started_ns;
      }
      verdict.notes.push_back("rank " + std::to_string(init.comm->rank) + " (pid " + std::to_string(init.process->pid) +
                              ") initialises comm " + FormatHash(hash) + " from a unique id already used: " +
                              init.earlier);
    }
    std::sort(verdict.culprit_ranks.begin(), verdict.culprit_ranks.end());
    verdict.culprit_ranks.erase(std::unique(verdict.culprit_ranks.begin(), verdict.culprit_ranks.end()),
                                verdict.culprit_ranks.end());
    out.explained.insert(hash);
    std::string instead;
    for (const auto& [new_hash, ranks] : NewCommsBeside(facts, inits.front(), stale_processes)) {
      out.explained.insert(new_hash);
      verdict.explained_comms.push_back(new_hash);
      for (int rank : ranks) verdict.other_ranks.push_back(rank);
      if (verdict.explained_comms.size() <= kMaxNamedNewComms) {
        instead += (instead.empty() ? "; " : ", ") + FormatRanksVerb(ranks, "initialises", "initialise") + " comm " +
                   FormatHash(new_hash);
      }
    }
    std::sort(verdict.other_ranks.begin(), verdict.other_ranks.end());
    verdict.other_ranks.erase(std::unique(verdict.other_ranks.begin(), verdict.other_ranks.end()),
                              verdict.other_ranks.end());
    verdict.summary = "stale_unique_id on comm " + FormatHash(hash) + ": " +
                      FormatRanksVerb(verdict.culprit_ranks, "initialises", "initialise") + " comm " +
                      FormatHash(hash) + " again, from a used unique id (" + inits.front().earlier + ")" +
                      (instead.empty() ? "" : instead + " instead");
    verdict.notes.push_back(
        "likely cause: a unique id read before the new root published its own, from a store key an earlier group "
        "or attempt left (torch publishes every new group's id under the key of the group before it; the "
        "launcher's store outlives both)");
    out.verdicts.push_back(std::move(verdict));
  }
  return out;
}

}  // namespace ncclwatch::detect
