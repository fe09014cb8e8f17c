#include "preload/observe/config_comm_name.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstddef>
#include <cstring>

#include "preload/hooks/keep_errno.h"
#include "preload/hooks/nccl_abi_232.h"

namespace ncclwatch::preload {
namespace {

// Copies up to `length` (<= one page) bytes at `address` of this process into `out`; returns
// how many could be read before an unmapped page (0 for a bad pointer). process_vm_readv never
// splits one iovec, so the range is cut at its page boundary: a short string that ends just
// before an unmapped page is still read. Reading ourselves is permitted whatever ptrace_scope
// says, and Docker's default seccomp profile allows the call (kernel >= 4.8); where it is
// refused (ENOSYS, EPERM) nothing is read: a missing name, never a fault.
size_t CopyOwnMemory(const void* address, void* out, size_t length) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(address);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const size_t first = std::min<size_t>(length, page - start % page);
  iovec local{out, length};
  iovec remote[2] = {{const_cast<void*>(address), first},
                     {reinterpret_cast<void*>(start + first), length - first}};
  const ssize_t n = process_vm_readv(getpid(), &local, 1, remote, first < length ? 2 : 1, 0);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

}  // namespace

shm::PackedCommName CommNameOfConfig(const void* config) noexcept {
  KeepErrno keep;  // the hooked call's errno is the application's
  if (config == nullptr) return {};
  nccl_abi::ConfigPrefix prefix{};
  const size_t got = CopyOwnMemory(config, &prefix, sizeof prefix);
  constexpr size_t kNameEnd = offsetof(nccl_abi::ConfigPrefix, commName) + sizeof prefix.commName;
  if (got < kNameEnd || prefix.magic != nccl_abi::kApiMagic || prefix.version < nccl_abi::kFirstVersionWithCommName ||
      prefix.size < kNameEnd || prefix.commName == nullptr) {
    return {};
  }
  char text[shm::kCommNameBytes] = {};
  const size_t copied = CopyOwnMemory(prefix.commName, text, sizeof text);
  return shm::PackCommName(text, strnlen(text, copied));
}

}  // namespace ncclwatch::preload
