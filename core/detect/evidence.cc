#include "core/detect/evidence.h"

#include <algorithm>

namespace ncclwatch::detect {
namespace {

// The note naming the communicator ranks no fact covers: at most 32 runs are spelled out.
std::optional<std::string> NotVisibleNote(const CommGroup& group) {
  if (!group.partial()) return std::nullopt;
  std::vector<format::RankRange> ranges = group.NotVisibleRanges();
  const size_t shown = std::min<size_t>(ranges.size(), 32);
  std::string text = std::to_string(group.members.size()) + " of " + std::to_string(group.nranks) +
                     (group.scope == Scope::kJob ? " ranks left a dump; no dump from "
                                                 : " ranks visible on this host; not visible: ") +
                     format::FormatRangeList(std::vector<format::RankRange>(ranges.begin(), ranges.begin() + shown));
  if (shown < ranges.size()) text += " and more";
  return text;
}

}  // namespace

Fingerprint FingerprintOf(const RecordFacts& record) {
  return Fingerprint{record.op, record.count, record.datatype, record.redop, record.root};
}

std::optional<SyncFacts> LongestBlockedSync(const ProcessFacts& process) {
  std::optional<SyncFacts> oldest;
  for (const SyncFacts& slot : process.syncs) {
    if (slot.blocked_since_ns == 0) continue;
    if (!oldest || slot.blocked_since_ns < oldest->blocked_since_ns) oldest = slot;
  }
  return oldest;
}

std::optional<uint64_t> EnqueueTimeAtOrAfter(const CommFacts& comm, uint64_t seq) {
  const RecordFacts* best = nullptr;
  for (const RecordFacts& record : comm.records) {
    if (record.seq < seq || record.enqueue_ns == 0) continue;
    if (best == nullptr || record.seq < best->seq) best = &record;
  }
  if (best == nullptr) return std::nullopt;
  return best->enqueue_ns;
}

RankEvidence DescribeRank(const CommMember& member, uint64_t seq, uint64_t* framework_seq) {
  RankEvidence evidence;
  evidence.comm_rank = member.rank();
  evidence.global_rank = member.process->global_rank;
  evidence.pid = member.process->pid;
  evidence.host = member.process->host;
  evidence.device = member.comm->device;
  evidence.alive = member.alive();
  evidence.last_enqueued_seq = member.comm->last_enqueued_seq;
  evidence.last_completed_seq = member.comm->last_completed_seq;
  evidence.async_error = member.comm->async_error;
  if (seq != 0) {
    if (const RecordFacts* record = FindRecord(*member.comm, seq)) {
      evidence.at_seq = FingerprintOf(*record);
      if (*framework_seq == 0) *framework_seq = record->framework_seq;
    }
  }
  evidence.blocked_sync = LongestBlockedSync(*member.process);
  return evidence;
}

Verdict StartVerdict(VerdictKind kind, const CommGroup& group, uint64_t seq) {
  Verdict verdict;
  verdict.kind = kind;
  verdict.comm_hash = group.comm_hash;
  verdict.seq = seq;
  verdict.nranks = group.nranks;
  verdict.partial = group.partial();
  for (const CommMember& member : group.members) {
    RankEvidence evidence = DescribeRank(member, seq, &verdict.framework_seq);
    if (verdict.op.empty() && evidence.at_seq) verdict.op = evidence.at_seq->op;
    if (evidence.async_error != 0) {
      verdict.notes.push_back("rank " + std::to_string(evidence.comm_rank) +
                              " reports NCCL async error " +
                              format::NcclResultName(evidence.async_error));
    }
    if (member.comm->untracked_ops != 0) {
      verdict.notes.push_back("rank " + std::to_string(evidence.comm_rank) + ": " +
                              CountOf(member.comm->untracked_ops, "op", "ops") +
                              (member.comm->untracked_ops == 1 ? " could not be tracked; its completion is unknown"
                                                               : " could not be tracked; their completion is unknown"));
    }
    verdict.rank_evidence.push_back(std::move(evidence));
  }
  if (std::optional<std::string> note = NotVisibleNote(group)) {
    verdict.notes.push_back(*note);
  }
  return verdict;
}

std::string FormatFingerprint(const Fingerprint& f) {
  return f.op + "(count=" + std::to_string(f.count) + ", datatype=" + format::DataTypeName(f.datatype) +
         ", redop=" + format::RedOpName(f.redop) + ", root=" + format::RankOrNone(f.root) + ")";
}

}  // namespace ncclwatch::detect
