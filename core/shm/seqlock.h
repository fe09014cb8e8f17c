// Single-writer seqlock helpers over a std::atomic<uint32_t> version word.
//
// The writer brackets its updates with SeqlockWriteBegin/End; all guarded fields are
// atomics accessed relaxed. A reader copies the fields between SeqlockReadBegin and
// SeqlockReadValid and retries when the check fails. Works across processes over shared
// memory, and for a reader mapping the memory read-only.
#ifndef NCCLWATCH_CORE_SHM_SEQLOCK_H_
#define NCCLWATCH_CORE_SHM_SEQLOCK_H_

#include <atomic>
#include <cstdint>

namespace ncclwatch::shm {

inline uint32_t SeqlockWriteBegin(std::atomic<uint32_t>& version) {
  const uint32_t v = version.load(std::memory_order_relaxed);
  version.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  return v + 1;
}

inline void SeqlockWriteEnd(std::atomic<uint32_t>& version, uint32_t begun) {
  version.store(begun + 1, std::memory_order_release);
}

// Returns false when a write is in progress (odd version).
inline bool SeqlockReadBegin(const std::atomic<uint32_t>& version, uint32_t* seen) {
  *seen = version.load(std::memory_order_acquire);
  return (*seen & 1u) == 0;
}

inline bool SeqlockReadValid(const std::atomic<uint32_t>& version, uint32_t seen) {
  std::atomic_thread_fence(std::memory_order_acquire);
  return version.load(std::memory_order_relaxed) == seen;
}

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_SEQLOCK_H_
