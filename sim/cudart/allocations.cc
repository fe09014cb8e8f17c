#include "allocations.h"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

namespace ncclsim {
namespace {

constexpr size_t kAlignment = 256;  // cudaMalloc's documented minimum alignment

std::mutex mu;
std::map<const char*, Allocation>& Table() {
  static auto* table = new std::map<const char*, Allocation>();
  return *table;
}

}  // namespace

void* Allocate(size_t size, cudaMemoryType type, int device) {
  const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (p == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  Table()[static_cast<const char*>(p)] = Allocation{p, size, type, device};
  return p;
}

bool Release(void* ptr, unsigned types) {
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = Table().find(static_cast<const char*>(ptr));
    if (it == Table().end() || (types & (1u << it->second.type)) == 0) return false;
    Table().erase(it);
  }
  std::free(ptr);
  return true;
}

Allocation Find(const void* ptr) {
  const char* p = static_cast<const char*>(ptr);
  std::lock_guard<std::mutex> lock(mu);
  auto it = Table().upper_bound(p);
  if (it == Table().begin()) return Allocation{};
  --it;
  const Allocation& a = it->second;
  if (p >= it->first + (a.size == 0 ? 1 : a.size)) return Allocation{};
  return a;
}

}  // namespace ncclsim
