#include "allocations.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "device_profile.h"

namespace ncclsim {
namespace {

constexpr size_t kAlignment = 256;  // cudaMalloc's documented minimum alignment

std::mutex mu;
std::map<const char*, Allocation>& Table() {
  static auto* table = new std::map<const char*, Allocation>();
  return *table;
}
std::map<int, DeviceUsage>& Usage() {
  static auto* usage = new std::map<int, DeviceUsage>();
  return *usage;
}

size_t Rounded(size_t size) { return size == 0 ? kAlignment : (size + kAlignment - 1) / kAlignment * kAlignment; }

bool CountsAgainstDevice(const Allocation& a) {
  return a.device >= 0 && (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged);
}

// Adds (or, with sign -1, removes) `a` from its device's usage. Called with mu held.
void AccountLocked(const Allocation& a, int sign) {
  if (!CountsAgainstDevice(a)) return;
  DeviceUsage& u = Usage()[a.device];
  const size_t bytes = Rounded(a.size);
  u.bytes = sign > 0 ? u.bytes + bytes : u.bytes - bytes;
  if (a.origin != AllocationOrigin::kPool) return;
  u.pool_bytes = sign > 0 ? u.pool_bytes + bytes : u.pool_bytes - bytes;
  u.pool_high = std::max(u.pool_high, u.pool_bytes);
}

// The entry whose range contains `p`, or end(). Called with mu held.
std::map<const char*, Allocation>::iterator ContainingLocked(const char* p) {
  auto it = Table().upper_bound(p);
  if (it == Table().begin()) return Table().end();
  --it;
  const Allocation& a = it->second;
  return p < it->first + (a.size == 0 ? 1 : a.size) ? it : Table().end();
}

}  // namespace

void* Allocate(size_t size, cudaMemoryType type, int device, AllocationOrigin origin) {
  Allocation a{nullptr, size, type, device, origin};
  std::lock_guard<std::mutex> lock(mu);
  // A device holds no more than the profile's memory, however much the host has.
  if (CountsAgainstDevice(a) && Usage()[device].bytes + Rounded(size) > ActiveProfile().memory_bytes) {
    return nullptr;
  }
  void* p = std::aligned_alloc(kAlignment, Rounded(size));
  if (p == nullptr) return nullptr;
  a.base = p;
  Table()[static_cast<const char*>(p)] = a;
  AccountLocked(a, +1);
  return p;
}

bool Release(void* ptr, unsigned types) {
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = Table().find(static_cast<const char*>(ptr));
    if (it == Table().end() || (types & (1u << it->second.type)) == 0) return false;
    if (it->second.origin == AllocationOrigin::kHostRegister) return false;
    AccountLocked(it->second, -1);
    Table().erase(it);
  }
  std::free(ptr);
  return true;
}

Allocation Find(const void* ptr) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = ContainingLocked(static_cast<const char*>(ptr));
  return it == Table().end() ? Allocation{} : it->second;
}

bool RegisterHostRange(void* ptr, size_t size) {
  const char* begin = static_cast<const char*>(ptr);
  std::lock_guard<std::mutex> lock(mu);
  // Overlap: an entry containing the first byte, or one starting inside the range.
  if (ContainingLocked(begin) != Table().end()) return false;
  auto next = Table().lower_bound(begin);
  if (next != Table().end() && next->first < begin + size) return false;
  Table()[begin] = Allocation{ptr, size, cudaMemoryTypeHost, -1, AllocationOrigin::kHostRegister};
  return true;
}

bool UnregisterHostRange(void* ptr) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = Table().find(static_cast<const char*>(ptr));
  if (it == Table().end() || it->second.origin != AllocationOrigin::kHostRegister) return false;
  Table().erase(it);
  return true;
}

DeviceUsage UsageOf(int device) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = Usage().find(device);
  return it == Usage().end() ? DeviceUsage{} : it->second;
}

void ResetPoolHighWatermark(int device) {
  std::lock_guard<std::mutex> lock(mu);
  DeviceUsage& u = Usage()[device];
  u.pool_high = u.pool_bytes;
}

}  // namespace ncclsim
