// NCCL's communicator identity ("commHash"), computed exactly as NCCL 2.28 computes it, so
// that what ncclwatch reports lines up with NCCL's own "commId 0x..." log lines and RAS.
//
//   root communicator:  Hash(uniqueId.internal, 128 bytes)          (InitRank*, InitAll,
//                        InitRankScalable uses its first id)
//   split child:         hash of (parent hash as u64, parent's split count after its
//                        increment as int, color as int); the count grows on every
//                        ncclCommSplit call, NCCL_SPLIT_NOCOLOR included
//   shrink child:        the same with split count 0 and color 0
#ifndef NCCLWATCH_CORE_COMM_ID_COMM_HASH_H_
#define NCCLWATCH_CORE_COMM_ID_COMM_HASH_H_

#include <cstddef>
#include <cstdint>

namespace ncclwatch {

// Incremental form of NCCL's hash: the result depends on how the input is split into
// Eat() calls, as NCCL's does.
class NcclHasher {
 public:
  void Eat(const void* bytes, size_t size);
  uint64_t Digest() const;

 private:
  uint64_t acc_[2] = {1, 1};
};

uint64_t NcclBytesHash(const void* bytes, size_t size);

// `unique_id_bytes` is ncclUniqueId::internal (NCCL_UNIQUE_ID_BYTES = 128 bytes).
uint64_t RootCommHash(const void* unique_id_bytes, size_t size);

// `split_count` is the parent's count of ncclCommSplit calls including this one.
uint64_t SplitCommHash(uint64_t parent_hash, int split_count, int color);

uint64_t ShrinkCommHash(uint64_t parent_hash);

}  // namespace ncclwatch

#endif  // NCCLWATCH_CORE_COMM_ID_COMM_HASH_H_
