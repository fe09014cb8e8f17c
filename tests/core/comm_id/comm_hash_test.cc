#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

#include "core/comm_id/comm_hash.h"

namespace ncclwatch {
namespace {

// Reference values computed by hand-unrolling NCCL's formula for tiny inputs, so a
// changed constant or step order fails here rather than only against a real NCCL log.
uint64_t Mix(uint64_t a, uint64_t b, uint64_t word, uint64_t* b_out) {
  a += b;
  b ^= a;
  a ^= a >> 31;
  a *= 0x9de62bbc8cef3ce3ULL;
  b ^= b >> 32;
  b *= 0x485cd6311b599e79ULL;
  *b_out = b;
  return a + word;
}
uint64_t Finish(uint64_t a, uint64_t b) {
  uint64_t h = a;
  h ^= h >> 31;
  h *= 0xbac3bd562846de6bULL;
  h += b;
  h ^= h >> 32;
  h *= 0x995a187a14e7b445ULL;
  return h;
}

TEST_CASE("hash of a single 8-byte word follows NCCL's eat/digest steps", "[comm_hash]") {
  const uint64_t word = 0x0123456789abcdefULL;
  uint64_t b = 0;
  const uint64_t a = Mix(1 ^ 8, 1, word, &b);
  CHECK(NcclBytesHash(&word, sizeof(word)) == Finish(a, b));
}

TEST_CASE("the size is folded in per Eat call, so field boundaries matter", "[comm_hash]") {
  const uint64_t parent = 0x1122334455667788ULL;
  const int split = 1, color = 7;
  unsigned char joined[16];
  std::memcpy(joined, &parent, 8);
  std::memcpy(joined + 8, &split, 4);
  std::memcpy(joined + 12, &color, 4);
  CHECK(SplitCommHash(parent, split, color) != NcclBytesHash(joined, sizeof(joined)));
}

TEST_CASE("split hash is the three-field hash of parent, split count and color", "[comm_hash]") {
  const uint64_t parent = 0xdeadbeefcafef00dULL;
  NcclHasher expected;
  expected.Eat(&parent, 8);
  int count = 2, color = 5;
  expected.Eat(&count, 4);
  expected.Eat(&color, 4);
  CHECK(SplitCommHash(parent, 2, 5) == expected.Digest());
  CHECK(SplitCommHash(parent, 2, 5) != SplitCommHash(parent, 3, 5));
  CHECK(SplitCommHash(parent, 2, 5) != SplitCommHash(parent, 2, 6));
  CHECK(ShrinkCommHash(parent) == SplitCommHash(parent, 0, 0));
}

TEST_CASE("root hash covers all 128 bytes of the unique id", "[comm_hash]") {
  unsigned char id[128] = {};
  const uint64_t zero = RootCommHash(id, sizeof(id));
  id[127] = 1;
  CHECK(RootCommHash(id, sizeof(id)) != zero);
  id[127] = 0;
  CHECK(RootCommHash(id, sizeof(id)) == zero);
}

}  // namespace
}  // namespace ncclwatch
