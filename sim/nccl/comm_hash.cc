#include "comm_hash.h"

#include <cstring>

namespace ncclsim {
namespace {

// Two-word accumulator; each absorbed field also mixes in its size, so the result
// depends on how the input is cut into fields.
struct HashState {
  uint64_t a = 1;
  uint64_t b = 1;

  void Absorb(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    a ^= size;
    while (size > 0) {
      a += b;
      b ^= a;
      a ^= a >> 31;
      a *= 0x9de62bbc8cef3ce3ULL;
      b ^= b >> 32;
      b *= 0x485cd6311b599e79ULL;
      const size_t n = size < 8 ? size : 8;
      uint64_t word = 0;
      std::memcpy(&word, p, n);
      p += n;
      size -= n;
      a += word;
    }
  }

  uint64_t Digest() const {
    uint64_t h = a;
    h ^= h >> 31;
    h *= 0xbac3bd562846de6bULL;
    h += b;
    h ^= h >> 32;
    h *= 0x995a187a14e7b445ULL;
    return h;
  }
};

}  // namespace

uint64_t HashUniqueId(const void* bytes, size_t size) {
  HashState s;
  s.Absorb(bytes, size);
  return s.Digest();
}

uint64_t HashSplitChild(uint64_t parent_hash, int split_count, int color) {
  HashState s;
  s.Absorb(&parent_hash, sizeof parent_hash);
  s.Absorb(&split_count, sizeof split_count);
  s.Absorb(&color, sizeof color);
  return s.Digest();
}

}  // namespace ncclsim
