// Hooks must never change the errno the application sees. ncclwatch's own work around a
// forwarded call (activation, shared memory, logging) may make failing system calls.
#ifndef NCCLWATCH_PRELOAD_HOOKS_KEEP_ERRNO_H_
#define NCCLWATCH_PRELOAD_HOOKS_KEEP_ERRNO_H_

#include <errno.h>

namespace ncclwatch::preload {

namespace keep_errno_detail {
// The calling thread's errno, as __errno_location() gives it (fixed for the thread's life,
// and kept by a forked child, whose thread has the same TLS address). A hook saves and
// restores errno twice (around its work before and after the real call; the group ends' hooks,
// which only count depth, keep it inside the rare calls that do more); through libc that
// was a PLT call per access, about three per group after the compiler merged some, now one
// per thread. Initial-exec, like thread_state.h's variables: 8 bytes of the library's static
// TLS.
extern __thread int* location __attribute__((tls_model("initial-exec")));
// The thread's first use: asks libc, and remembers. Out of line, so that each hook carries
// one load and a test, not the call (about 20 hooks lie in the hot path's 16 KB).
[[gnu::cold, gnu::noinline]] int* RememberThreadErrno() noexcept;
}  // namespace keep_errno_detail

inline int* ThreadErrno() noexcept {
  int* location = keep_errno_detail::location;
  if (location == nullptr) [[unlikely]] location = keep_errno_detail::RememberThreadErrno();
  return location;
}

// Restores, when it goes out of scope, the errno there was when it was constructed.
class KeepErrno {
 public:
  KeepErrno() noexcept : KeepErrno(ThreadErrno()) {}
  // With the location already in hand (ThreadErrno()), for a hook that keeps errno twice.
  explicit KeepErrno(int* location) noexcept : location_(location), saved_(*location) {}
  ~KeepErrno() { *location_ = saved_; }
  KeepErrno(const KeepErrno&) = delete;
  KeepErrno& operator=(const KeepErrno&) = delete;

 private:
  int* const location_;
  const int saved_;
};

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_HOOKS_KEEP_ERRNO_H_
