// Regroups a host view by communicator: every visible rank of one comm_hash, across
// processes. The detector reasons about one group at a time.
#ifndef NCCLWATCH_CORE_DETECT_COMM_GROUP_H_
#define NCCLWATCH_CORE_DETECT_COMM_GROUP_H_

#include <cstdint>
#include <vector>

#include "core/detect/host_view.h"

namespace ncclwatch::detect {

// One rank of a communicator and the process holding it. Pointers into the HostView,
// which must outlive the group.
struct CommMember {
  const ProcessView* process = nullptr;
  const CommView* comm = nullptr;

  int rank() const { return comm->rank; }
  bool alive() const { return process->alive; }
  // Issued collectives that are not known complete.
  bool has_pending() const { return comm->last_enqueued_seq > comm->last_completed_seq; }
};

struct CommGroup {
  uint64_t comm_hash = 0;
  int nranks = 0;                   // largest nranks any member reports
  std::vector<CommMember> members;  // sorted by rank, one per rank

  bool partial() const { return static_cast<int>(members.size()) < nranks; }
};

// Groups sorted by comm_hash. If two instances claim the same rank of one communicator
// (a stale entry), the one from the live process with the latest init wins.
std::vector<CommGroup> GroupByComm(const HostView& view);

// The record of collective #seq in `comm`, or nullptr when it is not (or no longer) kept.
const CollectiveRecordView* FindRecord(const CommView& comm, uint64_t seq);

std::vector<int> RanksOf(const std::vector<CommMember>& members);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_COMM_GROUP_H_
