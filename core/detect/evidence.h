// Building blocks shared by the rules: per-rank evidence, the verdict skeleton every
// communicator rule starts from, and the few text formats used in summaries.
#ifndef NCCLWATCH_CORE_DETECT_EVIDENCE_H_
#define NCCLWATCH_CORE_DETECT_EVIDENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/detect/comm_group.h"
#include "core/detect/verdict.h"

namespace ncclwatch::detect {

Fingerprint FingerprintOf(const CollectiveRecordView& record);

// The process's host sync that has been blocked the longest, if any is blocked.
std::optional<SyncSlotView> LongestBlockedSync(const ProcessView& process);

// When `comm` issued #seq; if that record is no longer kept, when it issued the earliest
// kept later collective (a lower bound on how long #seq has been outstanding).
std::optional<uint64_t> EnqueueTimeAtOrAfter(const CommView& comm, uint64_t seq);

RankEvidence DescribeRank(const CommMember& member, uint64_t seq);

// A verdict about `group` at collective #seq (0: none) with comm_hash, nranks, partial,
// the evidence of every visible rank, op taken from the lowest rank that kept #seq, and
// notes about async errors and ranks not visible on this host.
Verdict StartVerdict(VerdictKind kind, const CommGroup& group, uint64_t seq);

// "[0,2,3]"
std::string FormatRanks(const std::vector<int>& ranks);
// "75.0 s"
std::string FormatSeconds(uint64_t ns);
// "0x00000000deadbeef"
std::string FormatHash(uint64_t hash);
// "AllReduce(count=1024, datatype=7, redop=0, root=-1)"
std::string FormatFingerprint(const Fingerprint& fingerprint);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_EVIDENCE_H_
