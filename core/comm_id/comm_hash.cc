#include "core/comm_id/comm_hash.h"

#include <cstring>

namespace ncclwatch {

void NcclHasher::Eat(const void* bytes, size_t size) {
  const char* input = static_cast<const char*>(bytes);
  acc_[0] ^= size;
  while (size != 0) {
    acc_[0] += acc_[1];
    acc_[1] ^= acc_[0];
    acc_[0] ^= acc_[0] >> 31;
    acc_[0] *= 0x9de62bbc8cef3ce3ULL;
    acc_[1] ^= acc_[1] >> 32;
    acc_[1] *= 0x485cd6311b599e79ULL;
    const size_t chunk = size < sizeof(uint64_t) ? size : sizeof(uint64_t);
    uint64_t word = 0;
    std::memcpy(&word, input, chunk);
    input += chunk;
    size -= chunk;
    acc_[0] += word;
  }
}

uint64_t NcclHasher::Digest() const {
  uint64_t h = acc_[0];
  h ^= h >> 31;
  h *= 0xbac3bd562846de6bULL;
  h += acc_[1];
  h ^= h >> 32;
  h *= 0x995a187a14e7b445ULL;
  return h;
}

uint64_t NcclBytesHash(const void* bytes, size_t size) {
  NcclHasher hasher;
  hasher.Eat(bytes, size);
  return hasher.Digest();
}

uint64_t RootCommHash(const void* unique_id_bytes, size_t size) {
  return NcclBytesHash(unique_id_bytes, size);
}

uint64_t SplitCommHash(uint64_t parent_hash, int split_count, int color) {
  NcclHasher hasher;
  hasher.Eat(&parent_hash, sizeof(parent_hash));
  hasher.Eat(&split_count, sizeof(split_count));
  hasher.Eat(&color, sizeof(color));
  return hasher.Digest();
}

uint64_t ShrinkCommHash(uint64_t parent_hash) { return SplitCommHash(parent_hash, 0, 0); }

}  // namespace ncclwatch
