#include "window.h"

#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

namespace ncclsim {

bool RegisterWindow(Comm* c, void* buff, size_t bytes, int flags, ncclWindow_t* out, std::string* error) {
  const int slot = c->windows_registered++ % kWindowSlots;
  WindowEntry* mine = c->segment->window(slot, c->rank);
  mine->pid = static_cast<int32_t>(getpid());
  mine->address = reinterpret_cast<uint64_t>(buff);
  mine->bytes = bytes;
  const int32_t published[2] = {slot, 0};
  std::vector<std::array<int32_t, 2>> all;
  if (!BootAllGather(c, published, &all)) {
    *error = "communicator aborted while waiting for the other ranks to register";
    return false;
  }
  for (const auto& other : all) {
    if (other[0] != slot) {
      *error = "ranks registered different numbers of windows (registration is collective)";
      return false;
    }
  }
  *out = new ncclWindow_vidmem{c, slot, buff, bytes, flags};
  return true;
}

bool WriteToPeerWindow(Comm* c, int slot, int peer, size_t offset, const void* src, size_t n,
                       std::string* error) {
  const WindowEntry* target = c->segment->window(slot, peer);
  if (offset > target->bytes || n > target->bytes - offset) {
    *error = "write of " + std::to_string(n) + " bytes at offset " + std::to_string(offset) +
             " exceeds rank " + std::to_string(peer) + "'s window of " + std::to_string(target->bytes) + " bytes";
    return false;
  }
  // Pids repeat across hosts (each has its own PID namespace): a peer's pid means nothing here.
  if (c->hosts[peer] != c->hosts[c->rank]) {
    *error = "rank " + std::to_string(peer) + " is on host " + c->hosts[peer] +
             ": the sim's one-sided writes reach only ranks of this host";
    return false;
  }
  if (n == 0) return true;
  void* dest = reinterpret_cast<unsigned char*>(target->address) + offset;
  if (target->pid == getpid()) {
    std::memcpy(dest, src, n);
    return true;
  }
  iovec local{const_cast<void*>(src), n};
  iovec remote{dest, n};
  const ssize_t written = process_vm_writev(target->pid, &local, 1, &remote, 1, 0);
  if (written != static_cast<ssize_t>(n)) {
    *error = std::string("process_vm_writev into rank ") + std::to_string(peer) + " failed: " +
             (written < 0 ? std::strerror(errno) : "short write");
    return false;
  }
  return true;
}

}  // namespace ncclsim
