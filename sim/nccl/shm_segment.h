// A communicator's shared-memory segment: created by whichever rank comes first,
// attached by all, and unlinked as soon as every rank has attached (mappings stay),
// so a killed job leaves nothing in /dev/shm (or the fabric directory) once init is done.
// Where it lives: segment_store.h.
#ifndef NCCLWATCH_SIM_NCCL_SHM_SEGMENT_H_
#define NCCLWATCH_SIM_NCCL_SHM_SEGMENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "segment_store.h"
#include "shared_state.h"

namespace ncclsim {

class ShmSegment {
 public:
  ShmSegment(uint64_t comm_hash, int nranks);
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Maps the segment (creating it if first), publishes this rank's host name and
  // counts the rank in. Blocks until the segment exists; returns false with *error
  // set on a system failure or if stop() turns true while waiting.
  bool Attach(int rank, const std::function<bool()>& stop, std::string* error);
  // Blocks until all ranks attached; false if stop() turned true first.
  bool WaitAllAttached(const std::function<bool()>& stop);
  // Removes the name if still present (failure and abort paths).
  void Unlink();

  const std::string& name() const { return store_.name(); }
  // The host name rank r published at attach (valid once all ranks attached).
  std::string host(int r) const;
  SegmentHeader* header() const { return static_cast<SegmentHeader*>(base_.load()); }
  RankSlot* slot(int r) const;
  P2pChannel* channel(int from, int to) const;
  unsigned char* stage(int r) const;
  unsigned char* p2p_buffer(int from, int to) const;
  WindowEntry* window(int slot, int rank) const;
  SignalBoard* signals(int from, int to) const;  // signals `to` received from `from`

 private:
  SegmentStore store_;
  int nranks_;
  SegmentLayout layout_;
  std::atomic<void*> base_{nullptr};  // read by Abort from other threads
  // Abort (any thread) and the end of init (the rank's thread) may both unlink: once.
  std::atomic<bool> unlinked_{false};
};

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_SHM_SEGMENT_H_
