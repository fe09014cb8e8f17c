// Communicator identity exactly as NCCL 2.28 computes it (src/include/bitops.h,
// src/init.cc), so ids printed by the sim match what tools expect from real NCCL.
#ifndef NCCLWATCH_SIM_NCCL_COMM_HASH_H_
#define NCCLWATCH_SIM_NCCL_COMM_HASH_H_

#include <cstddef>
#include <cstdint>

namespace ncclsim {

// Hash of the 128 bytes of an ncclUniqueId.
uint64_t HashUniqueId(const void* bytes, size_t size);

// Hash of a split (or shrink, with split_count 0 and color 0) child.
uint64_t HashSplitChild(uint64_t parent_hash, int split_count, int color);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_COMM_HASH_H_
