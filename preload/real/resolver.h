// Finds the next definition of a hooked function, i.e. the real NCCL or CUDA runtime one.
//
// NCCL (in order): `pnccl<Name>` then `nccl<Name>` through RTLD_NEXT; else the library of
// the caller (dladdr of the return address, dlopen RTLD_NOLOAD, dlsym on that handle),
// which finds libnccl when it was loaded RTLD_LOCAL as by a Python extension; else an
// already loaded libnccl.so.2. The CUDA runtime likewise, with libcudart.so.13 / .12, and
// the driver with libcuda.so.1.
// Never returns one of the preload's own definitions.
#ifndef NCCLWATCH_PRELOAD_REAL_RESOLVER_H_
#define NCCLWATCH_PRELOAD_REAL_RESOLVER_H_

#include <atomic>

namespace ncclwatch::preload {

enum class Library { kNccl, kCudart, kDriver };

// `name` is the public name (e.g. "ncclAllReduce"). nullptr when nothing is found.
void* ResolveNext(Library library, const char* name, const void* caller) noexcept;

// Resolves on first use and caches; logs once per name when the function is missing.
template <typename Fn>
class NextFunction {
 public:
  constexpr NextFunction(Library library, const char* name) : library_(library), name_(name) {}

  Fn* Get(const void* caller) {
    Fn* fn = fn_.load(std::memory_order_acquire);
    if (fn != nullptr) return fn;
    fn = reinterpret_cast<Fn*>(ResolveNext(library_, name_, caller));
    if (fn != nullptr) {
      fn_.store(fn, std::memory_order_release);
    } else {
      ReportMissing();
    }
    return fn;
  }

 private:
  void ReportMissing();

  Library library_;
  const char* name_;
  std::atomic<Fn*> fn_{nullptr};
  std::atomic<bool> reported_{false};
};

void ReportMissingFunction(const char* name, std::atomic<bool>* reported);

template <typename Fn>
void NextFunction<Fn>::ReportMissing() {
  ReportMissingFunction(name_, &reported_);
}

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_REAL_RESOLVER_H_
