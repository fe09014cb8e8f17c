#include "core/detect/evidence.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>

namespace ncclwatch::detect {
namespace {

// Notes naming the communicator ranks that no process on this host holds.
std::optional<std::string> MissingRanksNote(const CommGroup& group) {
  if (!group.partial()) return std::nullopt;
  std::set<int> visible;
  for (const CommMember& member : group.members) visible.insert(member.rank());
  std::vector<int> missing;
  for (int rank = 0; rank < group.nranks && missing.size() < 32; ++rank) {
    if (!visible.count(rank)) missing.push_back(rank);
  }
  int missing_count = group.nranks - static_cast<int>(visible.size());
  std::string text = "partial view: " + std::to_string(group.members.size()) + " of " +
                     std::to_string(group.nranks) + " ranks visible on this host; not visible: " +
                     FormatRanks(missing);
  if (missing_count > static_cast<int>(missing.size())) text += " and more";
  return text;
}

}  // namespace

Fingerprint FingerprintOf(const CollectiveRecordView& record) {
  return Fingerprint{record.op, record.count, record.datatype, record.redop, record.root};
}

std::optional<SyncSlotView> LongestBlockedSync(const ProcessView& process) {
  std::optional<SyncSlotView> oldest;
  for (const SyncSlotView& slot : process.syncs) {
    if (slot.blocked_since_ns == 0) continue;
    if (!oldest || slot.blocked_since_ns < oldest->blocked_since_ns) oldest = slot;
  }
  return oldest;
}

std::optional<uint64_t> EnqueueTimeAtOrAfter(const CommView& comm, uint64_t seq) {
  const CollectiveRecordView* best = nullptr;
  for (const CollectiveRecordView& record : comm.records) {
    if (record.seq < seq || record.enqueue_ns == 0) continue;
    if (best == nullptr || record.seq < best->seq) best = &record;
  }
  if (best == nullptr) return std::nullopt;
  return best->enqueue_ns;
}

RankEvidence DescribeRank(const CommMember& member, uint64_t seq) {
  RankEvidence evidence;
  evidence.comm_rank = member.rank();
  evidence.global_rank = member.process->global_rank;
  evidence.pid = member.process->pid;
  evidence.alive = member.alive();
  evidence.last_enqueued_seq = member.comm->last_enqueued_seq;
  evidence.last_completed_seq = member.comm->last_completed_seq;
  evidence.async_error = member.comm->async_error;
  if (seq != 0) {
    if (const CollectiveRecordView* record = FindRecord(*member.comm, seq)) {
      evidence.at_seq = FingerprintOf(*record);
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
    RankEvidence evidence = DescribeRank(member, seq);
    if (verdict.op.empty() && evidence.at_seq) verdict.op = evidence.at_seq->op;
    if (evidence.async_error != 0) {
      verdict.notes.push_back("rank " + std::to_string(evidence.comm_rank) +
                              " reports NCCL async error " +
                              std::to_string(evidence.async_error));
    }
    verdict.ranks.push_back(std::move(evidence));
  }
  if (std::optional<std::string> note = MissingRanksNote(group)) {
    verdict.notes.push_back(*note);
  }
  return verdict;
}

std::string FormatRanks(const std::vector<int>& ranks) {
  std::string text = "[";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i != 0) text += ",";
    text += std::to_string(ranks[i]);
  }
  return text + "]";
}

std::string FormatSeconds(uint64_t ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", static_cast<double>(ns) / 1e9);
  return buffer;
}

std::string FormatHash(uint64_t hash) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%016" PRIx64, hash);
  return buffer;
}

std::string FormatFingerprint(const Fingerprint& f) {
  char buffer[128];
  std::snprintf(buffer, sizeof buffer, "(count=%" PRIu64 ", datatype=%d, redop=%d, root=%d)",
                f.count, f.datatype, f.redop, f.root);
  return f.op + buffer;
}

}  // namespace ncclwatch::detect
