// Ring records that complete together: the unit of completion tracking, deferral and
// flagging.
#ifndef NCCLWATCH_PRELOAD_OBSERVE_RECORD_RANGE_H_
#define NCCLWATCH_PRELOAD_OBSERVE_RECORD_RANGE_H_

#include <cstdint>

#include "core/shm/comm_slot.h"

namespace ncclwatch::preload {

struct CommEntry;

// A run of consecutive ring records of one communicator (one op, or one group's ops on one
// stream).
struct RecordRange {
  uint64_t first_ring_index = 0;
  uint64_t last_ring_index = 0;
  uint64_t max_collective_seq = 0;  // 0: no collective among them

  static RecordRange Of(const shm::RecordRef& ref) {
    return {ref.ring_index, ref.ring_index, ref.collective ? ref.seq : 0};
  }
  // Appends the next records of the same communicator.
  void Extend(const RecordRange& next) {
    last_ring_index = next.last_ring_index;
    if (next.max_collective_seq != 0) max_collective_seq = next.max_collective_seq;
  }
};

// Records of `comm` enqueued on `stream`, done when that stream's work so far is done. Held
// while a group is open (ThreadState::group_range and group_ranges), and while a nonblocking
// communicator's enqueue is in progress (CommEntry::deferred).
struct StreamRange {
  CommEntry* comm = nullptr;
  uint64_t stream = 0;
  RecordRange range;
};

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_RECORD_RANGE_H_
