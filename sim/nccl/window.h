// Registered windows (ncclCommWindowRegister) and the transport of one-sided writes into them.
// Registration is collective: every rank publishes (pid, address, size) of its buffer in the
// comm's shared segment under the same slot, so a peer's ncclPutSignal can later write straight
// into that buffer: memcpy within one process, process_vm_writev across processes.
#ifndef NCCLWATCH_SIM_NCCL_WINDOW_H_
#define NCCLWATCH_SIM_NCCL_WINDOW_H_

#include <nccl.h>

#include <cstddef>
#include <string>

#include "comm.h"

// What ncclWindow_t points to in the sim; local to the registering rank.
struct ncclWindow_vidmem {
  ncclComm* comm;
  int slot;  // in the segment's window table, the same on every rank
  void* user_ptr;
  size_t bytes;
  int flags;
};

namespace ncclsim {

// Blocks until every rank registered its buffer (false if aborted first). *out is owned by the caller.
bool RegisterWindow(Comm* c, void* buff, size_t bytes, int flags, ncclWindow_t* out, std::string* error);

// Writes n bytes from src at `offset` into `peer`'s buffer of window slot `slot`.
// False with *error set when the range exceeds the peer's buffer or the write fails.
bool WriteToPeerWindow(Comm* c, int slot, int peer, size_t offset, const void* src, size_t n,
                       std::string* error);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_WINDOW_H_
