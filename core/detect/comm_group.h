// Regroups a host view by communicator: every visible rank of one comm_hash, across
// processes. The detector reasons about one group at a time.
#ifndef NCCLWATCH_CORE_DETECT_COMM_GROUP_H_
#define NCCLWATCH_CORE_DETECT_COMM_GROUP_H_

#include <cstdint>
#include <vector>

#include "core/detect/facts.h"
#include "core/format/rank_list.h"

namespace ncclwatch::detect {

// One rank of a communicator and the process holding it. Pointers into the JobFacts,
// which must outlive the group.
struct CommMember {
  const ProcessFacts* process = nullptr;
  const CommFacts* comm = nullptr;

  int rank() const { return comm->rank; }
  // Still takes part: its process runs and it has not destroyed, finalized, aborted or
  // revoked the communicator. A peer waiting on a rank that is not alive waits for nothing.
  bool alive() const { return process->alive && !comm->left(); }
  // Issued collectives that are not known complete.
  bool has_pending() const { return comm->last_enqueued_seq > comm->last_completed_seq; }
  // Alive and known to wait on a collective (pending.h: WaitsOnCollective).
  bool waits() const;
};

struct CommGroup {
  uint64_t comm_hash = 0;
  int nranks = 0;                   // largest nranks any member reports
  Scope scope = Scope::kHost;       // of the facts the group was built from
  std::vector<CommMember> members;  // sorted by rank, one per rank

  bool partial() const { return static_cast<int>(members.size()) < nranks; }
  // The ranks in [0, nranks) with no member, as runs: O(members), whatever nranks claims
  // (a dump may claim 2^20 ranks).
  std::vector<format::RankRange> NotVisibleRanges() const;
};

// Groups sorted by comm_hash. If two instances claim the same rank of one communicator
// (a stale entry), the one from the live process with the latest init wins. Ranks outside
// [0, nranks) are dropped: no rule can place them.
std::vector<CommGroup> GroupByComm(const JobFacts& facts);

// The record of collective #seq in `comm`, or nullptr when it is not (or no longer) kept.
const RecordFacts* FindRecord(const CommFacts& comm, uint64_t seq);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_COMM_GROUP_H_
