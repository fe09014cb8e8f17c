#include "core/watch/watch_phase.h"

#include <algorithm>

namespace ncclwatch::watch {

uint64_t QuietLimitNs(uint64_t stall_threshold_ns) { return stall_threshold_ns / 2; }

WatchPhase PhaseOf(bool comm_ready, uint64_t since_first_init_ns, uint64_t stall_threshold_ns) {
  if (comm_ready) return WatchPhase::kWatching;
  return since_first_init_ns < QuietLimitNs(stall_threshold_ns) ? WatchPhase::kQuiet : WatchPhase::kOwnInit;
}

bool ConcernsOwnInit(const detect::Verdict& verdict, const std::set<uint64_t>& own_inits) {
  if (verdict.comm_hash != 0 && own_inits.count(verdict.comm_hash) != 0) return true;
  return std::any_of(verdict.explained_comms.begin(), verdict.explained_comms.end(),
                     [&](uint64_t hash) { return own_inits.count(hash) != 0; });
}

}  // namespace ncclwatch::watch
