// Building blocks shared by the rules: per-rank evidence, the verdict skeleton every
// communicator rule starts from, and the fingerprint text used in summaries (ranks, hashes
// and durations are formatted by core/format).
#ifndef NCCLWATCH_CORE_DETECT_EVIDENCE_H_
#define NCCLWATCH_CORE_DETECT_EVIDENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/detect/comm_group.h"
#include "core/detect/verdict.h"
#include "core/format/duration.h"
#include "core/format/hex.h"
#include "core/format/nccl_names.h"
#include "core/format/plural.h"
#include "core/format/rank_list.h"

namespace ncclwatch::detect {

Fingerprint FingerprintOf(const RecordFacts& record);

// The process's host sync that has been blocked the longest, if any is blocked.
std::optional<SyncFacts> LongestBlockedSync(const ProcessFacts& process);

// When `comm` issued #seq; if that record is no longer kept, when it issued the earliest
// kept later collective (a lower bound on how long #seq has been outstanding).
std::optional<uint64_t> EnqueueTimeAtOrAfter(const CommFacts& comm, uint64_t seq);

// Also sets *framework_seq, when still 0, from the member's record at `seq`.
RankEvidence DescribeRank(const CommMember& member, uint64_t seq, uint64_t* framework_seq);

// A verdict about `group` at collective #seq (0: none) with comm_hash, nranks, partial,
// the evidence of every visible rank, op taken from the lowest rank that kept #seq, and
// notes about async errors and ranks not visible on this host.
Verdict StartVerdict(VerdictKind kind, const CommGroup& group, uint64_t seq);

using format::FormatDuration;  // "1m15s"
using format::FormatRanks;     // "rank 3", "ranks 0-2,5"
using format::FormatRanksVerb; // "rank 3 has", "ranks 0-2,5 have"
using format::CountOf;         // "1 rank", "2 ranks"

// "0xdeadbeef": NCCL's own form of a commHash ("commHash 0x%lx" in its INFO lines), the one
// form every ncclwatch output uses.
inline std::string FormatHash(uint64_t hash) { return format::FormatHex(hash); }
// "AllReduce(count=1024, datatype=float32, redop=sum, root=-)"
std::string FormatFingerprint(const Fingerprint& fingerprint);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_EVIDENCE_H_
