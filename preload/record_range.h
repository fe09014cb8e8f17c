// Ring records that complete together: the unit of completion tracking, deferral and
// flagging.
#ifndef NCCLWATCH_PRELOAD_RECORD_RANGE_H_
#define NCCLWATCH_PRELOAD_RECORD_RANGE_H_

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
  // Appends the next record of the same communicator.
  void Extend(const shm::RecordRef& ref) {
    last_ring_index = ref.ring_index;
    if (ref.collective) max_collective_seq = ref.seq;
  }
};

// Records of `comm` enqueued on `stream`, done when that stream's work so far is done. Held
// between a group's outermost GroupEnd and its return (ThreadState::group_ranges), and
// while a nonblocking communicator's enqueue is in progress (CommEntry::deferred).
struct StreamRange {
  CommEntry* comm = nullptr;
  uint64_t stream = 0;
  RecordRange range;
};

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_RECORD_RANGE_H_
