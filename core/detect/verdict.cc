#include "core/detect/verdict.h"

#include <algorithm>
#include <array>
#include <utility>

#include "core/format/framework_seq.h"
#include "core/format/hex.h"
#include "core/format/nccl_names.h"

namespace ncclwatch::detect {
namespace {

constexpr std::array<std::pair<VerdictKind, std::string_view>, 15> kNames = {{
    {VerdictKind::kMismatch, "mismatch"},
    {VerdictKind::kP2PMismatch, "p2p_mismatch"},
    {VerdictKind::kStaleUniqueId, "stale_unique_id"},
    {VerdictKind::kRankExited, "rank_exited"},
    {VerdictKind::kInitHang, "init_hang"},
    {VerdictKind::kP2PDeadlock, "p2p_deadlock"},
    {VerdictKind::kStraggler, "straggler"},
    {VerdictKind::kReplayStraggler, "replay_straggler"},
    {VerdictKind::kP2PStraggler, "p2p_straggler"},
    {VerdictKind::kCollectiveHang, "collective_hang"},
    {VerdictKind::kReplayHang, "replay_hang"},
    {VerdictKind::kP2PHang, "p2p_hang"},
    {VerdictKind::kSyncStuck, "sync_stuck"},
    {VerdictKind::kNone, "none"},
    {VerdictKind::kUnknown, "unknown"},
}};

}  // namespace

std::string ToString(VerdictKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return std::string(name);
  }
  return "none";
}

std::optional<VerdictKind> ParseVerdictKind(std::string_view name) {
  for (const auto& [k, n] : kNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

int Priority(VerdictKind kind) { return static_cast<int>(kind); }

bool IsPointToPointKind(VerdictKind kind) {
  return kind == VerdictKind::kP2PMismatch || kind == VerdictKind::kP2PDeadlock ||
         kind == VerdictKind::kP2PStraggler || kind == VerdictKind::kP2PHang;
}

std::string WaitSubject(uint64_t seq, const std::string& op, uint64_t framework_seq, bool p2p,
                        const std::string& graph_label) {
  if (!graph_label.empty()) return "replay " + std::to_string(seq) + " of " + graph_label;
  return "#" + std::to_string(seq) + " " + op + format::FrameworkSeqNote(framework_seq, p2p);
}

bool IsReplayKind(VerdictKind kind) { return kind == VerdictKind::kReplayStraggler || kind == VerdictKind::kReplayHang; }

bool AboutReplay(const Verdict& v) {
  return v.graph != 0 && (IsReplayKind(v.kind) || v.kind == VerdictKind::kRankExited);
}

uint64_t ReplayGraphOf(const Verdict& v) { return AboutReplay(v) ? v.graph : 0; }

std::string ReplaySubject(const Verdict& v) {
  return "replay " + std::to_string(v.seq) + " of " +
         (v.graph_label.empty() ? "graph " + format::FormatHex(v.graph) : v.graph_label);
}

std::string WaitSubject(const Verdict& v) {
  return WaitSubject(v.seq, v.op, v.framework_seq, IsPointToPointKind(v.kind), AboutReplay(v) ? v.graph_label : "");
}

std::string ToString(SyncTarget target) {
  switch (target) {
    case SyncTarget::kStream: return "stream";
    case SyncTarget::kEvent: return "event";
    case SyncTarget::kDevice: return "device";
  }
  return "device";
}

std::string ToString(SyncApi api) { return api == SyncApi::kDriver ? "driver" : "runtime"; }

std::string SyncCallName(const SyncFacts& sync) {
  return format::SyncCallName(ToString(sync.target), sync.api == SyncApi::kDriver);
}

std::vector<int> AllCulpritRanks(const Verdict& verdict) {
  std::vector<int> out = verdict.culprit_ranks;
  for (const format::RankRange& range : verdict.culprits_without_facts) {
    for (int r = range.first;; ++r) {  // no r <= last: last may be INT_MAX
      out.push_back(r);
      if (r == range.last) break;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ncclwatch::detect
