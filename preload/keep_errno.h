// Hooks must never change the errno the application sees. ncclwatch's own work around a
// forwarded call (activation, shared memory, logging) may make failing system calls.
#ifndef NCCLWATCH_PRELOAD_KEEP_ERRNO_H_
#define NCCLWATCH_PRELOAD_KEEP_ERRNO_H_

#include <errno.h>

namespace ncclwatch::preload {

// Restores, when it goes out of scope, the errno there was when it was constructed.
class KeepErrno {
 public:
  KeepErrno() noexcept : saved_(errno) {}
  ~KeepErrno() { errno = saved_; }
  KeepErrno(const KeepErrno&) = delete;
  KeepErrno& operator=(const KeepErrno&) = delete;

 private:
  const int saved_;
};

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_KEEP_ERRNO_H_
