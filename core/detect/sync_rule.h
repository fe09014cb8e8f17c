// Rule for kind "sync_stuck": a process blocked in a CUDA host sync that no pending NCCL
// operation (collective or P2P) explains.
#ifndef NCCLWATCH_CORE_DETECT_SYNC_RULE_H_
#define NCCLWATCH_CORE_DETECT_SYNC_RULE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "core/detect/detect_config.h"
#include "core/detect/facts.h"
#include "core/detect/verdict.h"

namespace ncclwatch::detect {

// True when one of the process's communicators has an incomplete collective issued no
// later than the sync began (the sync may be waiting for it), or whose issue time is no
// longer known, or a P2P op not known complete issued no later than the sync began: the
// host is that op's victim, not a culprit.
bool PendingOpExplains(const ProcessFacts& process, const SyncFacts& sync);

// The process's longest-blocked sync, when blocked longer than the configured threshold
// (offline, Scope::kJob: any sync still blocked in the dump) and not explained by a
// pending NCCL operation. The caller drops it when a communicator of the process already has
// a verdict (that verdict carries the sync as evidence).
std::optional<Verdict> CheckSyncStuck(const ProcessFacts& process, const DetectConfig& config,
                                      uint64_t now_ns, Scope scope);

// "rank 2 blocked in cudaStreamSynchronize (stream 0x1f) for 1m15s": live, its age at `now_ns`;
// offline, at sync.seen_ns (the dump's detection time; no duration when that is unknown). Of a
// gone process: "... for 4.0s until it exited" (its exit time), or no duration.
std::string DescribeBlockedSync(int rank, const ProcessFacts& process, const SyncFacts& sync, uint64_t now_ns,
                                Scope scope);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_SYNC_RULE_H_
