// cudaLibrary*: libraries are opaque handles, because the sim cannot read a device image. A
// kernel looked up by name gets a stable handle (a launch of it is a no-op like any other);
// globals, managed variables and unified functions do not exist, so those lookups fail with
// cudaErrorSymbolNotFound.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "api_common.h"
#include "handle_registry.h"

namespace ncclsim {
namespace {

struct Kernel {};

struct Library {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Kernel>> kernels;  // handed out by cudaLibraryGetKernel
};

HandleRegistry<Library>& Libraries() {
  static auto* registry = new HandleRegistry<Library>();
  return *registry;
}

cudaError_t Load(cudaLibrary_t* out) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  auto* library = new Library();
  Libraries().Add(library);
  *out = reinterpret_cast<cudaLibrary_t>(library);
  return cudaSuccess;
}

cudaError_t LoadData(cudaLibrary_t* out, const void* code) {
  if (out == nullptr || code == nullptr) return cudaErrorInvalidValue;
  return Load(out);
}

cudaError_t LoadFromFile(cudaLibrary_t* out, const char* file_name) {
  if (out == nullptr || file_name == nullptr) return cudaErrorInvalidValue;
  std::FILE* f = std::fopen(file_name, "rb");
  if (f == nullptr) return cudaErrorFileNotFound;
  std::fclose(f);
  return Load(out);
}

cudaError_t Unload(cudaLibrary_t handle) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  Library* library = Libraries().Lookup(handle);
  if (library == nullptr || !Libraries().Remove(library)) return cudaErrorInvalidResourceHandle;
  delete library;
  return cudaSuccess;
}

cudaError_t GetKernel(cudaKernel_t* out, cudaLibrary_t handle, const char* name) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (out == nullptr || name == nullptr) return cudaErrorInvalidValue;
  Library* library = Libraries().Lookup(handle);
  if (library == nullptr) return cudaErrorInvalidResourceHandle;
  std::lock_guard<std::mutex> lock(library->mu);
  auto& kernel = library->kernels[name];
  if (!kernel) kernel = std::make_unique<Kernel>();
  *out = reinterpret_cast<cudaKernel_t>(kernel.get());
  return cudaSuccess;
}

cudaError_t GetKernelCount(unsigned* count, cudaLibrary_t handle) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (count == nullptr) return cudaErrorInvalidValue;
  Library* library = Libraries().Lookup(handle);
  if (library == nullptr) return cudaErrorInvalidResourceHandle;
  std::lock_guard<std::mutex> lock(library->mu);
  *count = static_cast<unsigned>(library->kernels.size());
  return cudaSuccess;
}

// Globals, managed variables and unified functions: there is no module to find them in.
cudaError_t NoSymbol(void** out, cudaLibrary_t handle, const char* name) {
  if (cudaError_t e = CheckUsable(); e != cudaSuccess) return e;
  if (out == nullptr || name == nullptr) return cudaErrorInvalidValue;
  if (Libraries().Lookup(handle) == nullptr) return cudaErrorInvalidResourceHandle;
  return cudaErrorSymbolNotFound;
}

}  // namespace
}  // namespace ncclsim

using ncclsim::Report;

NCCLSIM_EXPORT cudaError_t cudaLibraryLoadData(cudaLibrary_t* library, const void* code, cudaJitOption*, void**,
                                               unsigned int, cudaLibraryOption*, void**, unsigned int) {
  return Report(ncclsim::LoadData(library, code));
}
NCCLSIM_EXPORT cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t* library, const char* file_name, cudaJitOption*,
                                                   void**, unsigned int, cudaLibraryOption*, void**, unsigned int) {
  return Report(ncclsim::LoadFromFile(library, file_name));
}
NCCLSIM_EXPORT cudaError_t cudaLibraryUnload(cudaLibrary_t library) { return Report(ncclsim::Unload(library)); }
NCCLSIM_EXPORT cudaError_t cudaLibraryGetKernel(cudaKernel_t* kernel, cudaLibrary_t library, const char* name) {
  return Report(ncclsim::GetKernel(kernel, library, name));
}
NCCLSIM_EXPORT cudaError_t cudaLibraryGetKernelCount(unsigned int* count, cudaLibrary_t library) {
  return Report(ncclsim::GetKernelCount(count, library));
}
NCCLSIM_EXPORT cudaError_t cudaLibraryGetGlobal(void** dptr, size_t*, cudaLibrary_t library, const char* name) {
  return Report(ncclsim::NoSymbol(dptr, library, name));
}
NCCLSIM_EXPORT cudaError_t cudaLibraryGetManaged(void** dptr, size_t*, cudaLibrary_t library, const char* name) {
  return Report(ncclsim::NoSymbol(dptr, library, name));
}
NCCLSIM_EXPORT cudaError_t cudaLibraryGetUnifiedFunction(void** fptr, cudaLibrary_t library, const char* symbol) {
  return Report(ncclsim::NoSymbol(fptr, library, symbol));
}
