#include "module.h"

#include <unordered_map>

namespace ncclsim::driver {
namespace {

std::mutex& HandlesMutex() {
  static std::mutex* mu = new std::mutex();  // never destroyed: handles may be used during exit
  return *mu;
}
std::unordered_map<const void*, HandleKind>& Handles() {
  static auto* handles = new std::unordered_map<const void*, HandleKind>();
  return *handles;
}

}  // namespace

void RegisterHandle(const void* handle, HandleKind kind) {
  std::lock_guard lock(HandlesMutex());
  Handles()[handle] = kind;
}
void UnregisterHandle(const void* handle) {
  std::lock_guard lock(HandlesMutex());
  Handles().erase(handle);
}
HandleKind KindOf(const void* handle) {
  std::lock_guard lock(HandlesMutex());
  auto it = Handles().find(handle);
  return it == Handles().end() ? HandleKind::kNone : it->second;
}

CUmodule NewModule() {
  auto* module = new CUmod_st();
  RegisterHandle(module, HandleKind::kModule);
  return module;
}

bool DestroyModule(CUmodule module) {
  if (KindOf(module) != HandleKind::kModule) return false;
  UnregisterHandle(module);
  for (auto& [name, function] : module->functions) UnregisterHandle(function.get());
  delete module;
  return true;
}

CUfunction FunctionOf(CUmodule module, const char* name) {
  std::lock_guard lock(module->mu);
  std::unique_ptr<CUfunc_st>& slot = module->functions[name];
  if (!slot) {
    slot = std::make_unique<CUfunc_st>();
    slot->module = module;
    slot->name = name;
    RegisterHandle(slot.get(), HandleKind::kFunction);
  }
  return slot.get();
}

CUfunction ResolveFunction(CUfunction f) {
  switch (KindOf(f)) {
    case HandleKind::kFunction: return f;
    case HandleKind::kKernel: return reinterpret_cast<CUkernel>(f)->function;
    default: return nullptr;
  }
}

}  // namespace ncclsim::driver
