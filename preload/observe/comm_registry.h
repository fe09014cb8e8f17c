// Maps ncclComm_t handles of this process to what ncclwatch knows about them.
//
// Lookups are lock-free (open addressing over a fixed table); inserts and erases happen
// only in init/destroy hooks. Entries are never freed: the tracker and late callers may
// still hold them, and a process creates few communicators.
#ifndef NCCLWATCH_PRELOAD_OBSERVE_COMM_REGISTRY_H_
#define NCCLWATCH_PRELOAD_OBSERVE_COMM_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/shm/comm_slot.h"
#include "preload/observe/record_range.h"

namespace ncclwatch::preload {

class CallSiteTable;

struct CommEntry {
  shm::CommSlot slot;
  CallSiteTable* call_sites = nullptr;  // NCCLWATCH_CALL_SITES=1 only (call_sites.h)
  uint64_t handle = 0;
  uint64_t comm_hash = 0;
  bool hash_known = false;
  bool nonblocking = false;
  std::atomic<int> device{-1};
  std::atomic<int> split_count{0};  // NCCL's splitCount of this communicator
  std::atomic<bool> init_pending{false};  // nonblocking init not yet confirmed
  // Work enqueued while a nonblocking communicator was still in progress: its completion
  // event may only be recorded once ncclCommGetAsyncError reports success.
  std::mutex deferred_mu;
  std::vector<StreamRange> deferred;
};

class CommRegistry {
 public:
  static constexpr uint32_t kCapacity = 1024;

  CommEntry* Find(uint64_t handle) const;
  bool Insert(uint64_t handle, CommEntry* entry);
  void Erase(uint64_t handle);

 private:
  static constexpr uint64_t kTombstone = 1;
  static uint32_t Home(uint64_t handle);

  struct Bucket {
    std::atomic<uint64_t> handle{0};
    std::atomic<CommEntry*> entry{nullptr};
  };
  Bucket buckets_[kCapacity];
  std::mutex write_mu_;  // init/destroy only
};

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_COMM_REGISTRY_H_
