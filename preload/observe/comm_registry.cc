#include "preload/observe/comm_registry.h"
#include "preload/hooks/hot_path.h"

namespace ncclwatch::preload {

NCCLWATCH_HOT uint32_t CommRegistry::Home(uint64_t handle) {
  return static_cast<uint32_t>(((handle >> 4) * 0x9e3779b97f4a7c15ULL) >> 54) % kCapacity;
}

NCCLWATCH_HOT CommEntry* CommRegistry::Find(uint64_t handle) const {
  if (handle <= kTombstone) return nullptr;
  for (uint32_t probe = 0, i = Home(handle); probe < kCapacity; ++probe, i = (i + 1) % kCapacity) {
    const uint64_t key = buckets_[i].handle.load(std::memory_order_acquire);
    if (key == handle) return buckets_[i].entry.load(std::memory_order_acquire);
    if (key == 0) return nullptr;
  }
  return nullptr;
}

bool CommRegistry::Insert(uint64_t handle, CommEntry* entry) {
  if (handle <= kTombstone) return false;
  std::lock_guard<std::mutex> lock(write_mu_);
  uint32_t reuse = kCapacity;
  for (uint32_t probe = 0, i = Home(handle); probe < kCapacity; ++probe, i = (i + 1) % kCapacity) {
    const uint64_t key = buckets_[i].handle.load(std::memory_order_relaxed);
    if (key == handle) {  // the handle was reused after a destroy we did not see
      buckets_[i].entry.store(entry, std::memory_order_release);
      return true;
    }
    if (key == kTombstone && reuse == kCapacity) reuse = i;
    if (key == 0) {
      if (reuse == kCapacity) reuse = i;
      break;
    }
  }
  if (reuse == kCapacity) return false;
  buckets_[reuse].entry.store(entry, std::memory_order_relaxed);
  buckets_[reuse].handle.store(handle, std::memory_order_release);
  return true;
}

void CommRegistry::Erase(uint64_t handle) {
  if (handle <= kTombstone) return;
  std::lock_guard<std::mutex> lock(write_mu_);
  for (uint32_t probe = 0, i = Home(handle); probe < kCapacity; ++probe, i = (i + 1) % kCapacity) {
    const uint64_t key = buckets_[i].handle.load(std::memory_order_relaxed);
    if (key == handle) {
      buckets_[i].handle.store(kTombstone, std::memory_order_release);
      return;
    }
    if (key == 0) return;
  }
}

}  // namespace ncclwatch::preload
