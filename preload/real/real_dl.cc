#include "preload/real/real_dl.h"

#include <dlfcn.h>

#include <atomic>

namespace ncclwatch::preload {
namespace {

DlsymFn* FindRealDlsym() {
  for (const char* node : {"GLIBC_2.34", "GLIBC_2.2.5"}) {
    if (void* fn = dlvsym(RTLD_NEXT, "dlsym", node); fn != nullptr) return reinterpret_cast<DlsymFn*>(fn);
  }
  return nullptr;
}

}  // namespace

DlsymFn* RealDlsym() noexcept {
  static std::atomic<DlsymFn*> cached{nullptr};
  DlsymFn* fn = cached.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = FindRealDlsym();
    cached.store(fn, std::memory_order_release);
  }
  return fn;
}

bool IsPreloadAddress(const void* address) noexcept {
  static const Dl_info self = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<const void*>(&IsPreloadAddress), &info);
    return info;
  }();
  Dl_info info{};
  return address != nullptr && dladdr(address, &info) != 0 && info.dli_fbase == self.dli_fbase;
}

}  // namespace ncclwatch::preload
