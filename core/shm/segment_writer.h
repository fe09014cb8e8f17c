// Creates and owns this process's segment (see layout.h for the format).
//
// Create() and ClaimCommSlot() are the calls that make system calls (the latter only when it
// must reserve the next chunk of /dev/shm, layout.h "Reservation"); both run at communicator
// creation, never on an op's path. Sync slot claims are lock-free, from any thread.
#ifndef NCCLWATCH_CORE_SHM_SEGMENT_WRITER_H_
#define NCCLWATCH_CORE_SHM_SEGMENT_WRITER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/shm/comm_slot.h"
#include "core/shm/job_identity.h"
#include "core/shm/layout.h"
#include "core/status/status.h"

namespace ncclwatch::shm {

struct SegmentOptions {
  uid_t uid = 0;
  std::string job_id;  // already sanitized
  pid_t pid = 0;
  uint64_t process_start_ticks = 0;
  std::string boot_id;   // empty: this boot's (process_info.h BootId())
  uint64_t run_key = 0;  // run_identity.h
  std::string host;
  RankIdentity rank;
  uint32_t ring_capacity = kDefaultRingCapacity;
  uint64_t stall_threshold_ns = 0;  // published for `status` and `ncclwatch exporter`; 0: unknown
};

class SegmentWriter {
 public:
  // Creates /dev/shm/<SegmentName(...)> with mode 0600 and reserves its header, sync slots and
  // first kCommSlotsPerReservation comm slots. A full /dev/shm fails here, with ENOSPC, not
  // later in the job.
  static Result<std::unique_ptr<SegmentWriter>> Create(const SegmentOptions& options);
  ~SegmentWriter();  // unmaps, never unlinks
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  const std::string& name() const { return name_; }
  SegmentHeader& header() const { return *header_; }

  // A fresh slot, else one whose communicator was destroyed, aborted or failed to init; an
  // error when all kMaxComms are in use (error_number 0) or /dev/shm cannot back another
  // chunk (its errno, e.g. ENOSPC). Both count in comms_unwatched.
  Result<CommSlot> ClaimCommSlot();
  CommSlot CommSlotAt(uint32_t index) const;

  // nullptr when all kMaxSyncSlots are owned.
  SyncSlot* ClaimSyncSlot(int tid);
  static void ReleaseSyncSlot(SyncSlot* slot);

  // Records the rank when the launcher's environment did not give one.
  void AdoptRankFromCommunicator(int rank);

  // Marks the segment closed and removes its name; the mapping stays valid.
  void CloseAndUnlink();

  // Records how this process leaves (layout.h, exit evidence) and marks the segment kExited;
  // the segment stays. `value` is the exit status for ExitHow::kStatus, the signal number for
  // kSignal. Async-signal-safe (atomic stores and the vDSO clock only); the first call wins.
  void RecordExit(ExitHow how, int value);
  // The same on a bare header, for a signal handler that holds no SegmentWriter.
  static void RecordExitIn(SegmentHeader* header, ExitHow how, int value);

 private:
  SegmentWriter(std::string name, int fd, void* base, const SegmentGeometry& geometry);
  // Backs comm slots [0, slots) with /dev/shm. Caller holds claim_mu_.
  Status ReserveCommSlots(uint32_t slots);

  std::string name_;
  int fd_;  // kept open to reserve later chunks
  std::mutex claim_mu_;  // fresh-slot claims and reservations (communicator creation only)
  void* base_;
  SegmentGeometry geometry_;
  SegmentHeader* header_;
  bool unlinked_ = false;
};

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_SEGMENT_WRITER_H_
