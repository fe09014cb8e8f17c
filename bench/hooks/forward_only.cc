// The least an LD_PRELOAD interposer can do: each hooked family's entry point, forwarding to
// the next definition (found once with dlsym(RTLD_NEXT)) and nothing else. scripts/bench runs
// bench_hook_overhead with it as a third configuration: what any interposer pays on this
// machine before doing any work, cold and warm, the floor beneath ncclwatch's figures.
// (cuStreamSynchronize is reached through a pointer from cuGetProcAddress: a plain forwarder
// never sees it, so driver_sync has no floor.)
#include <dlfcn.h>

#include <atomic>

namespace {

template <typename Fn>
Fn* Next(std::atomic<Fn*>& cached, const char* name) {
  Fn* fn = cached.load(std::memory_order_relaxed);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn*>(dlsym(RTLD_NEXT, name));
    cached.store(fn, std::memory_order_relaxed);
  }
  return fn;
}

}  // namespace

// Opaque pointers and plain integers stand for the NCCL and CUDA types: the ABI is the same.
#define FORWARD(ret, name, params, args)                       \
  extern "C" __attribute__((visibility("default"))) ret name params { \
    static std::atomic<ret(*) params> next{nullptr};           \
    return Next(next, #name) args;                             \
  }

FORWARD(int, ncclAllReduce, (const void* s, void* r, unsigned long c, int t, int o, void* comm, void* st),
        (s, r, c, t, o, comm, st))
FORWARD(int, ncclSend, (const void* s, unsigned long c, int t, int peer, void* comm, void* st),
        (s, c, t, peer, comm, st))
FORWARD(int, ncclGroupStart, (), ())
FORWARD(int, ncclGroupEnd, (), ())
FORWARD(int, cudaStreamSynchronize, (void* st), (st))
FORWARD(int, cudaGraphLaunch, (void* exec, void* st), (exec, st))
