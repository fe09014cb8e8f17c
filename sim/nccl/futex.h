// Blocking waits on 32-bit words that may live in memory shared between processes.
#ifndef NCCLWATCH_SIM_NCCL_FUTEX_H_
#define NCCLWATCH_SIM_NCCL_FUTEX_H_

#include <atomic>
#include <cstdint>

namespace ncclsim {

// Sleeps while *word == expected, at most timeout_ms (negative: no limit).
// Returns early on a wake, a signal or a changed value; callers re-check their condition.
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, int timeout_ms = -1);

// Wakes every waiter on word, in any process.
void FutexWakeAll(std::atomic<uint32_t>* word);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_FUTEX_H_
