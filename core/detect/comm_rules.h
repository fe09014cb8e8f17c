// One function per verdict kind about a communicator. Each looks only at its own
// condition and returns a verdict when it holds; choosing among several is the detector's
// job (see detector.h). The exact rules are written up in core/detect/README.md.
#ifndef NCCLWATCH_CORE_DETECT_COMM_RULES_H_
#define NCCLWATCH_CORE_DETECT_COMM_RULES_H_

#include <cstdint>
#include <optional>

#include "core/detect/comm_group.h"
#include "core/detect/detect_config.h"
#include "core/detect/verdict.h"

namespace ncclwatch::detect {

// now - since, or 0 when since lies in the future (clocks of one host only).
inline uint64_t Age(uint64_t now_ns, uint64_t since_ns) {
  return now_ns > since_ns ? now_ns - since_ns : 0;
}

struct RuleContext {
  const CommGroup& group;
  const DetectConfig& config;
  uint64_t now_ns;
  uint64_t stall_ns;  // threshold for this communicator (adaptive or configured)

  bool offline() const { return group.scope == Scope::kJob; }
  // Whether a condition that began at `since_ns` has lasted longer than `threshold_ns`.
  // Offline the dump itself says it did (a live classifier saw the threshold pass before
  // dumping), and a missing time is no reason to doubt it; live, an unknown onset is.
  bool Overdue(std::optional<uint64_t> since_ns, uint64_t threshold_ns) const {
    if (offline()) return true;
    return since_ns && Age(now_ns, *since_ns) > threshold_ns;
  }
};

// Ranks disagree on what collective #N is. No threshold.
std::optional<Verdict> CheckMismatch(const RuleContext& context);
// A rank's process is gone while live peers wait on an incomplete collective.
std::optional<Verdict> CheckRankExited(const RuleContext& context);
// Some rank's init has not finished within the configured threshold.
std::optional<Verdict> CheckInitHang(const RuleContext& context);
// Some visible ranks joined #N, other visible ranks have not, for longer than stall_ns.
std::optional<Verdict> CheckStraggler(const RuleContext& context);
// Every visible rank joined #N and it has not completed for longer than stall_ns
// (longer still for a rank alone on this host).
std::optional<Verdict> CheckCollectiveHang(const RuleContext& context);

// CUDA graph replays (replay_state.h), per graph: the oldest replay a live rank waits in.
// Some visible ranks launched it, others have not, for longer than stall_ns.
std::optional<Verdict> CheckReplayStraggler(const RuleContext& context);
// Every visible rank launched it and it has not completed for longer than stall_ns.
std::optional<Verdict> CheckReplayHang(const RuleContext& context);
// CheckRankExited's half for replays: live ranks wait in a replay that an exited rank had not
// completed (called by CheckRankExited when no rank waits in a collective).
std::optional<Verdict> CheckRankExitedInReplay(const RuleContext& context);
// CheckMismatch's half for captures whose records aged out: ranks' graphs captured from the
// same #N have different keys (they captured different ops). No threshold.
std::optional<Verdict> CheckCaptureMismatch(const RuleContext& context);

// Point-to-point rules, per ordered pair of ranks in NCCL's matching order (p2p_waits.h).
// Thresholds: the configured stall threshold (P2P ops have no cadence); offline none.
// The count or datatype of a pending op differs from its peer's matching op. No threshold.
std::optional<Verdict> CheckP2PMismatch(const RuleContext& context);
// A cycle of ranks, each overdue in an op whose peer has not posted the matching op.
std::optional<Verdict> CheckP2PDeadlock(const RuleContext& context);
// Ranks are overdue in ops whose peer has not posted the matching op, and that peer waits on
// nobody: the peer is the culprit (the stage that did not send).
std::optional<Verdict> CheckP2PStraggler(const RuleContext& context);
// Both sides posted a matching pair of ops and the waiter's has not completed.
std::optional<Verdict> CheckP2PHang(const RuleContext& context);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_COMM_RULES_H_
