// Opaque module, function, library and kernel handles. The sim never reads a code image: a module
// "contains" every function name asked of it, and a kernel launch only takes its place in the
// stream (rt::LaunchNoOp).
#ifndef NCCLWATCH_SIM_DRIVER_MODULE_H_
#define NCCLWATCH_SIM_DRIVER_MODULE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "driver_api.h"

struct CUfunc_st {
  CUmodule module = nullptr;
  std::string name;
  std::mutex mu;
  std::map<int, int> attributes;  // CUfunction_attribute values set by cuFuncSetAttribute
  CUfunc_cache cache_config = CU_FUNC_CACHE_PREFER_NONE;
};

struct CUmod_st {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;  // created on first lookup
};

struct CUkern_st {
  CUlibrary library = nullptr;
  CUfunction function = nullptr;
};

struct CUlib_st {
  CUmodule module = nullptr;
  std::mutex mu;
  std::map<std::string, std::unique_ptr<CUkern_st>> kernels;
};

namespace ncclsim::driver {

enum class HandleKind { kNone, kModule, kFunction, kLibrary, kKernel, kLinkState };

// Handle registry, so that stale and foreign handles are refused instead of dereferenced.
void RegisterHandle(const void* handle, HandleKind kind);
void UnregisterHandle(const void* handle);
// kNone for null, stale and foreign handles.
HandleKind KindOf(const void* handle);

CUmodule NewModule();
// Frees the module and its functions; false if `module` is not live.
bool DestroyModule(CUmodule module);
// The module's function named `name`, created on first use.
CUfunction FunctionOf(CUmodule module, const char* name);

// A function handle as accepted by cuLaunchKernel and cuFuncGetAttribute: a CUfunction, or a
// CUkernel cast to one (allowed since CUDA 12.0). Null if neither.
CUfunction ResolveFunction(CUfunction f);

}  // namespace ncclsim::driver

#endif  // NCCLWATCH_SIM_DRIVER_MODULE_H_
