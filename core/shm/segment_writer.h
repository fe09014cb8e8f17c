// Creates and owns this process's segment (see layout.h for the format).
//
// Create() is the only call that makes system calls or allocates; slot claims are
// lock-free and may be called from any thread.
#ifndef NCCLWATCH_CORE_SHM_SEGMENT_WRITER_H_
#define NCCLWATCH_CORE_SHM_SEGMENT_WRITER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/shm/comm_slot.h"
#include "core/shm/job_identity.h"
#include "core/shm/layout.h"

namespace ncclwatch::shm {

struct SegmentOptions {
  uid_t uid = 0;
  std::string job_id;  // already sanitized
  pid_t pid = 0;
  uint64_t process_start_ticks = 0;
  std::string host;
  RankIdentity rank;
  uint32_t ring_capacity = kDefaultRingCapacity;
  uint32_t stall_threshold_ms = 0;  // published for `ncclwatch exporter`; 0: unknown
};

class SegmentWriter {
 public:
  // Creates /dev/shm/<SegmentName(...)> with mode 0600. nullptr and *error on failure.
  static std::unique_ptr<SegmentWriter> Create(const SegmentOptions& options, std::string* error);
  ~SegmentWriter();  // unmaps, never unlinks
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  const std::string& name() const { return name_; }
  SegmentHeader& header() const { return *header_; }

  // A fresh slot, else one whose communicator was destroyed, aborted or failed to init;
  // an invalid CommSlot when all kMaxComms are in use.
  CommSlot ClaimCommSlot();
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
  SegmentWriter(std::string name, void* base, const SegmentGeometry& geometry);

  std::string name_;
  void* base_;
  SegmentGeometry geometry_;
  SegmentHeader* header_;
  bool unlinked_ = false;
};

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_SEGMENT_WRITER_H_
