// Modules, libraries, kernels, the JIT linker and function attributes. Images are accepted without
// being read (see module.h); functions report the attributes of a small H100 kernel.
#include <sys/stat.h>

#include <cstring>
#include <vector>

#include "driver_api.h"
#include "module.h"

struct CUlinkState_st {
  std::vector<char> image;  // what cuLinkComplete hands out: the concatenated inputs
};

namespace ncclsim::driver {
namespace {

constexpr int kStaticSharedLimit = 48 << 10;     // without opt-in
constexpr int kOptInSharedLimit = 227 << 10;     // H100 opt-in per-block maximum (232448 bytes)

CUresult LoadModule(CUmodule* module, const void* image) {
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *module = NewModule();
  return CUDA_SUCCESS;
}

CUresult LoadModuleFile(CUmodule* module, const char* path) {
  if (module == nullptr || path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  struct stat st;
  if (stat(path, &st) != 0) return CUDA_ERROR_FILE_NOT_FOUND;
  *module = NewModule();
  return CUDA_SUCCESS;
}

int DefaultAttribute(CUfunction_attribute attribute) {
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: return 32;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: return 90;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: return kStaticSharedLimit;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: return -1;
    default: return 0;  // sizes of static shared/const/local memory, cluster settings
  }
}

CUresult GetAttribute(int* value, CUfunction_attribute attribute, CUfunction f) {
  if (value == nullptr || attribute < 0 || attribute >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
  CUfunction function = ResolveFunction(f);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard lock(function->mu);
  auto it = function->attributes.find(attribute);
  *value = it != function->attributes.end() ? it->second : DefaultAttribute(attribute);
  return CUDA_SUCCESS;
}

bool Settable(CUfunction_attribute attribute, int value) {
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: return value >= 0 && value <= kOptInSharedLimit;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: return value >= -1 && value <= 100;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: return value >= 0;
    default: return false;  // the rest are read-only
  }
}

CUresult SetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  CUfunction function = ResolveFunction(f);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (!Settable(attribute, value)) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(function->mu);
  function->attributes[attribute] = value;
  return CUDA_SUCCESS;
}

CUresult SetCacheConfig(CUfunction f, CUfunc_cache config) {
  CUfunction function = ResolveFunction(f);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(function->mu);
  function->cache_config = config;
  return CUDA_SUCCESS;
}

CUresult LoadLibrary(CUlibrary* library, CUresult (*load)(CUmodule*, const void*), const void* source) {
  if (library == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUmodule module = nullptr;
  if (CUresult r = load(&module, source); r != CUDA_SUCCESS) return r;
  auto* lib = new CUlib_st();
  lib->module = module;
  RegisterHandle(lib, HandleKind::kLibrary);
  *library = lib;
  return CUDA_SUCCESS;
}

CUresult LoadFileAsModule(CUmodule* module, const void* path) {
  return LoadModuleFile(module, static_cast<const char*>(path));
}

CUkernel KernelOf(CUlibrary library, const char* name) {
  std::lock_guard lock(library->mu);
  std::unique_ptr<CUkern_st>& slot = library->kernels[name];
  if (!slot) {
    slot = std::make_unique<CUkern_st>();
    slot->library = library;
    slot->function = FunctionOf(library->module, name);
    RegisterHandle(slot.get(), HandleKind::kKernel);
  }
  return slot.get();
}

CUlinkState_st* LinkState(CUlinkState state) {
  return KindOf(state) == HandleKind::kLinkState ? state : nullptr;
}

CUresult LinkCreate(CUlinkState* state) {
  if (state == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *state = new CUlinkState_st();
  RegisterHandle(*state, HandleKind::kLinkState);
  return CUDA_SUCCESS;
}

CUresult LinkAddData(CUlinkState state, const void* data, size_t size) {
  CUlinkState_st* link = LinkState(state);
  if (link == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (data == nullptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
  const char* bytes = static_cast<const char*>(data);
  link->image.insert(link->image.end(), bytes, bytes + size);
  return CUDA_SUCCESS;
}

CUresult LinkAddFile(CUlinkState state, const char* path) {
  if (LinkState(state) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  struct stat st;
  if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return stat(path, &st) == 0 ? CUDA_SUCCESS : CUDA_ERROR_FILE_NOT_FOUND;
}

}  // namespace
}  // namespace ncclsim::driver

namespace drv = ncclsim::driver;
using drv::HandleKind;
using drv::KindOf;

NCCLSIM_DRIVER_EXPORT CUresult cuModuleLoad(CUmodule* module, const char* path) {
  return drv::LoadModuleFile(module, path);
}
NCCLSIM_DRIVER_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  return drv::LoadModule(module, image);
}
NCCLSIM_DRIVER_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int, CUjit_option*,
                                                  void**) {
  return drv::LoadModule(module, image);
}
NCCLSIM_DRIVER_EXPORT CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatbin) {
  return drv::LoadModule(module, fatbin);
}
NCCLSIM_DRIVER_EXPORT CUresult cuModuleUnload(CUmodule module) {
  return drv::DestroyModule(module) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
NCCLSIM_DRIVER_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  if (function == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (KindOf(module) != HandleKind::kModule) return CUDA_ERROR_INVALID_HANDLE;
  *function = drv::FunctionOf(module, name);
  return CUDA_SUCCESS;
}
// The sim never reads an image, so it knows no global variable: refusing is safer than handing
// out memory of a size it cannot know.
NCCLSIM_DRIVER_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr*, size_t*, CUmodule module, const char* name) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return KindOf(module) == HandleKind::kModule ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
}
NCCLSIM_DRIVER_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) {
  if (mode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *mode = CU_MODULE_LAZY_LOADING;  // the CUDA 12.2+ default
  return CUDA_SUCCESS;
}

NCCLSIM_DRIVER_EXPORT CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction f) {
  return drv::GetAttribute(value, attribute, f);
}
NCCLSIM_DRIVER_EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  return drv::SetAttribute(f, attribute, value);
}
NCCLSIM_DRIVER_EXPORT CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache config) {
  return drv::SetCacheConfig(f, config);
}
NCCLSIM_DRIVER_EXPORT CUresult cuFuncGetName(const char** name, CUfunction f) {
  CUfunction function = drv::ResolveFunction(f);
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *name = function->name.c_str();
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuFuncGetModule(CUmodule* module, CUfunction f) {
  if (module == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (KindOf(f) != HandleKind::kFunction) return CUDA_ERROR_INVALID_HANDLE;
  *module = f->module;
  return CUDA_SUCCESS;
}

NCCLSIM_DRIVER_EXPORT CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option*, void**,
                                                 unsigned int, CUlibraryOption*, void**, unsigned int) {
  return drv::LoadLibrary(library, drv::LoadModule, code);
}
NCCLSIM_DRIVER_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary* library, const char* path, CUjit_option*, void**,
                                                     unsigned int, CUlibraryOption*, void**, unsigned int) {
  return drv::LoadLibrary(library, drv::LoadFileAsModule, path);
}
NCCLSIM_DRIVER_EXPORT CUresult cuLibraryUnload(CUlibrary library) {
  if (KindOf(library) != HandleKind::kLibrary) return CUDA_ERROR_INVALID_HANDLE;
  drv::UnregisterHandle(library);
  for (auto& [name, kernel] : library->kernels) drv::UnregisterHandle(kernel.get());
  drv::DestroyModule(library->module);
  delete library;
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuLibraryGetKernel(CUkernel* kernel, CUlibrary library, const char* name) {
  if (kernel == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (KindOf(library) != HandleKind::kLibrary) return CUDA_ERROR_INVALID_HANDLE;
  *kernel = drv::KernelOf(library, name);
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuLibraryGetModule(CUmodule* module, CUlibrary library) {
  if (module == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (KindOf(library) != HandleKind::kLibrary) return CUDA_ERROR_INVALID_HANDLE;
  *module = library->module;
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr*, size_t*, CUlibrary library, const char* name) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return KindOf(library) == HandleKind::kLibrary ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
}
NCCLSIM_DRIVER_EXPORT CUresult cuKernelGetFunction(CUfunction* function, CUkernel kernel) {
  if (function == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (KindOf(kernel) != HandleKind::kKernel) return CUDA_ERROR_INVALID_HANDLE;
  *function = kernel->function;
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuKernelGetLibrary(CUlibrary* library, CUkernel kernel) {
  if (library == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (KindOf(kernel) != HandleKind::kKernel) return CUDA_ERROR_INVALID_HANDLE;
  *library = kernel->library;
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuKernelGetName(const char** name, CUkernel kernel) {
  if (KindOf(kernel) != HandleKind::kKernel) return CUDA_ERROR_INVALID_HANDLE;
  return cuFuncGetName(name, kernel->function);
}
// Kernel attributes are per device in CUDA; the sim's devices are identical, so one set serves all.
NCCLSIM_DRIVER_EXPORT CUresult cuKernelGetAttribute(int* value, CUfunction_attribute attribute, CUkernel kernel,
                                                    CUdevice device) {
  if (KindOf(kernel) != HandleKind::kKernel) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = drv::CheckDevice(device); r != CUDA_SUCCESS) return r;
  return drv::GetAttribute(value, attribute, kernel->function);
}
NCCLSIM_DRIVER_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attribute, int value, CUkernel kernel,
                                                    CUdevice device) {
  if (KindOf(kernel) != HandleKind::kKernel) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = drv::CheckDevice(device); r != CUDA_SUCCESS) return r;
  return drv::SetAttribute(kernel->function, attribute, value);
}
NCCLSIM_DRIVER_EXPORT CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice device) {
  if (KindOf(kernel) != HandleKind::kKernel) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = drv::CheckDevice(device); r != CUDA_SUCCESS) return r;
  return drv::SetCacheConfig(kernel->function, config);
}

NCCLSIM_DRIVER_EXPORT CUresult cuLinkCreate_v2(unsigned int, CUjit_option*, void**, CUlinkState* state) {
  return drv::LinkCreate(state);
}
NCCLSIM_DRIVER_EXPORT CUresult cuLinkCreate(unsigned int, CUjit_option*, void**, CUlinkState* state) {
  return drv::LinkCreate(state);
}
NCCLSIM_DRIVER_EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType, void* data, size_t size,
                                                const char*, unsigned int, CUjit_option*, void**) {
  return drv::LinkAddData(state, data, size);
}
NCCLSIM_DRIVER_EXPORT CUresult cuLinkAddData(CUlinkState state, CUjitInputType, void* data, size_t size,
                                             const char*, unsigned int, CUjit_option*, void**) {
  return drv::LinkAddData(state, data, size);
}
NCCLSIM_DRIVER_EXPORT CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType, const char* path, unsigned int,
                                                CUjit_option*, void**) {
  return drv::LinkAddFile(state, path);
}
NCCLSIM_DRIVER_EXPORT CUresult cuLinkAddFile(CUlinkState state, CUjitInputType, const char* path, unsigned int,
                                             CUjit_option*, void**) {
  return drv::LinkAddFile(state, path);
}
// The "linked image" is the inputs as given; it stays valid until cuLinkDestroy, as in CUDA.
NCCLSIM_DRIVER_EXPORT CUresult cuLinkComplete(CUlinkState state, void** image, size_t* size) {
  CUlinkState_st* link = drv::LinkState(state);
  if (link == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (image == nullptr || size == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (link->image.empty()) link->image.push_back('\0');
  *image = link->image.data();
  *size = link->image.size();
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuLinkDestroy(CUlinkState state) {
  CUlinkState_st* link = drv::LinkState(state);
  if (link == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  drv::UnregisterHandle(link);
  delete link;
  return CUDA_SUCCESS;
}
