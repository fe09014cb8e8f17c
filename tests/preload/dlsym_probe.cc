// Probes how dlsym answers for NCCL names, for dlsym_check.sh, which runs it with and
// without the preload over the real NCCL 2.28.9 and over the sim (2.32.3).
// usage: dlsym_probe HOOK_EXPECTED(0|1) PUTSIGNAL_EXPECTED(0|1)
// Asserts, exit 1 on the first failure (one line):
//  - dlsym(handle, "ncclPutSignal") and dlsym(RTLD_DEFAULT, ...) are NULL iff the NCCL lacks
//    it, and a miss leaves a dlerror naming the symbol;
//  - dlsym(handle, "ncclAllReduce") is the preload's hook iff HOOK_EXPECTED, never NULL;
//  - a non-NCCL miss sets dlerror as usual, and a later dlerror() is NULL;
//  - dlsym(RTLD_NEXT, "dlsym") from the main program finds the first dlsym after it: the
//    preload's own when preloaded (glibc saw our caller, not the preload's).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int Fail(const char* what) {
  std::printf("FAIL: %s\n", what);
  return 1;
}

bool InPreload(void* address) {
  Dl_info info{};
  return address != nullptr && dladdr(address, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libncclwatch") != nullptr;
}

bool MissNamed(void* found, const char* name) {
  const char* error = dlerror();
  return found == nullptr && error != nullptr && std::strstr(error, name) != nullptr && dlerror() == nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return Fail("usage: dlsym_probe HOOK_EXPECTED PUTSIGNAL_EXPECTED");
  const bool hook_expected = std::atoi(argv[1]) != 0;
  const bool putsignal_expected = std::atoi(argv[2]) != 0;
  void* nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (nccl == nullptr) return Fail("dlopen libnccl.so.2");
  dlerror();

  void* all_reduce = dlsym(nccl, "ncclAllReduce");
  if (all_reduce == nullptr) return Fail("dlsym(handle, ncclAllReduce) is NULL");
  if (InPreload(all_reduce) != hook_expected) return Fail("dlsym(handle, ncclAllReduce): hook iff preloaded");

  void* by_handle = dlsym(nccl, "ncclPutSignal");
  if (putsignal_expected ? by_handle == nullptr : !MissNamed(by_handle, "ncclPutSignal")) {
    return Fail("dlsym(handle, ncclPutSignal) must be non-NULL iff this NCCL has it, a miss naming it");
  }
  if (putsignal_expected && InPreload(by_handle) != hook_expected) return Fail("ncclPutSignal: hook iff preloaded");

  // RTLD_LOCAL: the global scope has no NCCL at all, so RTLD_DEFAULT finds nothing but us.
  void* global = dlsym(RTLD_DEFAULT, "ncclPutSignal");
  if (!MissNamed(global, "ncclPutSignal")) return Fail("dlsym(RTLD_DEFAULT, ncclPutSignal) must be NULL");
  void* global_all_reduce = dlsym(RTLD_DEFAULT, "ncclAllReduce");
  if (!MissNamed(global_all_reduce, "ncclAllReduce")) return Fail("dlsym(RTLD_DEFAULT, ncclAllReduce) must be NULL");

  if (!MissNamed(dlsym(nccl, "ncclwatchNoSuchSymbol"), "ncclwatchNoSuchSymbol")) {
    return Fail("a missing non-hooked name sets dlerror once");
  }
  if (dlsym(RTLD_DEFAULT, "printf") == nullptr || dlerror() != nullptr) return Fail("printf found, no error");

  void* next_dlsym = dlsym(RTLD_NEXT, "dlsym");
  if (next_dlsym == nullptr || InPreload(next_dlsym) != hook_expected) {
    return Fail("dlsym(RTLD_NEXT, dlsym) must be judged from the caller (the preload's dlsym when preloaded)");
  }
  std::printf("ok: hook=%d putsignal=%d\n", hook_expected ? 1 : 0, putsignal_expected ? 1 : 0);
  return 0;
}
