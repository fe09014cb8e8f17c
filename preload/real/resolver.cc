#include "preload/real/resolver.h"

#include <dlfcn.h>

#include <string>

#include "preload/lifecycle/log.h"
#include "preload/real/real_dl.h"

namespace ncclwatch::preload {
namespace {

void* Accept(void* symbol) { return IsPreloadAddress(symbol) ? nullptr : symbol; }

void* FromHandle(void* handle, const std::string& primary, const char* name) {
  if (handle == nullptr) return nullptr;
  DlsymFn* const lookup = RealDlsym();
  if (lookup == nullptr) return nullptr;
  void* symbol = Accept(lookup(handle, primary.c_str()));
  if (symbol == nullptr) symbol = Accept(lookup(handle, name));
  return symbol;
}

void* FromCaller(const void* caller, const std::string& primary, const char* name) {
  Dl_info info{};
  if (caller == nullptr || dladdr(caller, &info) == 0 || info.dli_fname == nullptr || info.dli_fname[0] == '\0' ||
      IsPreloadAddress(caller)) {
    return nullptr;
  }
  void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  void* symbol = FromHandle(handle, primary, name);
  dlclose(handle);  // drops only the reference RTLD_NOLOAD added
  return symbol;
}

void* FromLoadedLibrary(const char* soname, const std::string& primary, const char* name) {
  void* handle = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  void* symbol = FromHandle(handle, primary, name);
  dlclose(handle);
  return symbol;
}

void* ResolveNextOrThrow(Library library, const char* name, const void* caller) {
  const bool nccl = library == Library::kNccl;
  // NCCL's strong `pnccl*` names cannot be our hooks, which export only `nccl*`.
  const std::string primary = nccl ? std::string("p") + name : std::string(name);
  void* symbol = FromHandle(RTLD_NEXT, primary, name);
  if (symbol == nullptr) symbol = FromCaller(caller, primary, name);
  if (nccl) {
    if (symbol == nullptr) symbol = FromLoadedLibrary("libnccl.so.2", primary, name);
  } else if (library == Library::kDriver) {
    if (symbol == nullptr) symbol = FromLoadedLibrary("libcuda.so.1", primary, name);
  } else {
    if (symbol == nullptr) symbol = FromLoadedLibrary("libcudart.so.13", primary, name);
    if (symbol == nullptr) symbol = FromLoadedLibrary("libcudart.so.12", primary, name);
  }
  return symbol;
}

}  // namespace

void* ResolveNext(Library library, const char* name, const void* caller) noexcept {
  try {
    return ResolveNextOrThrow(library, name, caller);
  } catch (...) {  // called from hooks (C ABI); bad_alloc and the like: treated as not found
    return nullptr;
  }
}

void ReportMissingFunction(const char* name, std::atomic<bool>* reported) {
  if (reported->exchange(true)) return;
  try {
    Log(LogLevel::kError, std::string("cannot find the real ") + name + "; returning its error code");
  } catch (...) {  // inside a hook (C ABI): a lost line, never the job
  }
}

}  // namespace ncclwatch::preload
