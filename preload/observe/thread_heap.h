// A per-thread object kept on the heap: made on the thread's first use, freed at its exit.
//
// The library's initial-exec static TLS must stay small enough for a dlopen'ed copy to load
// (preload_hot_layout allows 128 bytes; glibc keeps a 512-byte surplus for late loads), and
// the per-thread caches of the call-site capture are 400 bytes and more: only this pointer is
// thread-local, the object is not.
#ifndef NCCLWATCH_PRELOAD_OBSERVE_THREAD_HEAP_H_
#define NCCLWATCH_PRELOAD_OBSERVE_THREAD_HEAP_H_

#include <memory>

namespace ncclwatch::preload {

template <typename T>
T& ThisThreadHeap() {
  thread_local std::unique_ptr<T> instance;
  if (instance == nullptr) instance = std::make_unique<T>();
  return *instance;
}

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_THREAD_HEAP_H_
