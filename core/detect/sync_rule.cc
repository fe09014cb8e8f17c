#include "core/detect/sync_rule.h"

#include "core/detect/comm_rules.h"
#include "core/detect/completion.h"
#include "core/detect/evidence.h"
#include "core/detect/replay_state.h"
#include "core/format/duration.h"
#include "core/format/nccl_names.h"

namespace ncclwatch::detect {

bool PendingOpExplains(const ProcessFacts& process, const SyncFacts& sync) {
  for (const CommFacts& comm : process.comms) {
    if (!comm.judged()) continue;
    // A P2P op not known complete (pending, or its completion unknown), issued before the sync.
    for (const RecordFacts& op : comm.p2p_records) {
      if (P2PStateOf(op, comm) != P2PState::kComplete && op.enqueue_ns <= sync.blocked_since_ns) return true;
    }
    // A CUDA graph launch not known complete, launched before the sync.
    if (const ReplayFacts* replay = OldestPendingReplay(comm); replay && replay->enqueue_ns <= sync.blocked_since_ns) {
      return true;
    }
    if (comm.last_enqueued_seq <= comm.last_completed_seq) continue;
    std::optional<uint64_t> issued = EnqueueTimeAtOrAfter(comm, comm.last_completed_seq + 1);
    if (!issued || *issued <= sync.blocked_since_ns) return true;
  }
  return false;
}

std::string DescribeBlockedSync(int rank, const ProcessFacts& process, const SyncFacts& sync, uint64_t now_ns,
                                Scope scope) {
  const std::string target = ToString(sync.target);
  std::string text = "rank " + std::to_string(rank) + " blocked in " + SyncCallName(sync) + " (" +
                     format::SyncObjectText(target, sync.handle) + ")";
  if (sync.blocked_since_ns == 0) return text;
  if (!process.alive) {
    // Its sync ended with it: the block lasted until its exit, when that is known.
    if (process.exit.exit_ns != 0) {
      text += " for " + format::FormatAge(process.exit.exit_ns, sync.blocked_since_ns) + " until it exited";
    }
    return text;
  }
  const uint64_t seen = scope == Scope::kHost ? now_ns : sync.seen_ns;
  if (seen != 0) text += " for " + format::FormatAge(seen, sync.blocked_since_ns);
  return text;
}

std::optional<Verdict> CheckSyncStuck(const ProcessFacts& process, const DetectConfig& config,
                                      uint64_t now_ns, Scope scope) {
  if (!process.alive) return std::nullopt;
  std::optional<SyncFacts> sync = LongestBlockedSync(process);
  if (!sync) return std::nullopt;
  if (scope == Scope::kHost && Age(now_ns, sync->blocked_since_ns) <= config.stall_threshold_ns) {
    return std::nullopt;
  }
  if (PendingOpExplains(process, *sync)) return std::nullopt;

  Verdict verdict;
  verdict.kind = VerdictKind::kSyncStuck;
  verdict.op = ToString(sync->target);
  verdict.culprit_ranks.push_back(process.global_rank);
  verdict.since_ns = sync->blocked_since_ns;
  verdict.subject_pid = process.pid;
  RankEvidence evidence;
  evidence.global_rank = process.global_rank;
  evidence.pid = process.pid;
  evidence.blocked_sync = sync;
  verdict.rank_evidence.push_back(evidence);
  verdict.summary = "sync_stuck: global " + DescribeBlockedSync(process.global_rank, process, *sync, now_ns, scope) +
                    " (pid " + std::to_string(process.pid) + "), no NCCL operation pending";
  for (const CommFacts& comm : process.comms) {
    if (!comm.judged()) continue;
    verdict.notes.push_back("comm " + FormatHash(comm.comm_hash) + " rank " +
                            std::to_string(comm.rank) + ": last issued #" +
                            std::to_string(comm.last_enqueued_seq) + ", all complete" +
                            (comm.p2p_records.empty() ? "" : "; no P2P op pending"));
  }
  return verdict;
}

}  // namespace ncclwatch::detect
