// Where each way of finding the driver's host syncs leads, as a static CUDA runtime finds them:
// libcuda.so.1 dlopen'ed RTLD_LOCAL, cuGetProcAddress(_v2) found with dlsym, the runtime's
// cudaGetDriverEntryPoint(ByVersion) found with dlsym in the runtime given. One line per lookup:
//
//   <how> <symbol> <version> <flags> rc=<rc> status=<status> -> <library> <function>
//
// <library> is the file name of the object the function lives in (libncclwatch.so: our hook),
// <function> its dynamic symbol as dladdr names it ("-" if none starts there: our hooks are
// local). Used by scripts/gpu-check (step 6, on a real driver) and preload_entry_points (the
// sim, entry_points_test.py).
//
// usage: entry_point_probe [LIBCUDART]   (default libcudart.so.13)
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

using GetProcAddressV2 = int(const char*, void**, int, unsigned long long, int*);
using GetProcAddress = int(const char*, void**, int, unsigned long long);
using EntryPointByVersion = int(const char*, void**, unsigned int, unsigned long long, int*);
using EntryPoint = int(const char*, void**, unsigned long long, int*);

std::string Where(void* fn) {
  if (fn == nullptr) return "null";
  Dl_info info{};
  if (dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return "unknown";
  const char* slash = std::strrchr(info.dli_fname, '/');
  std::string where = slash != nullptr ? slash + 1 : info.dli_fname;
  where += " ";
  where += info.dli_sname != nullptr && info.dli_saddr == fn ? info.dli_sname : "-";
  return where;
}

struct Query {
  const char* symbol;
  int version;
  unsigned long long flags;  // 2: CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, cudaEnablePerThreadDefaultStream
};

constexpr Query kQueries[] = {
    {"cuStreamSynchronize", 13000, 0}, {"cuStreamSynchronize", 13000, 2}, {"cuEventSynchronize", 13000, 0},
    {"cuCtxSynchronize", 12000, 0},    {"cuCtxSynchronize", 13000, 0},    {"cuGetProcAddress", 13000, 0},
    {"cuGetProcAddress", 11030, 0},    {"cuStreamBeginCapture", 13000, 0}, {"cuMemAlloc", 13000, 0},
    {"cuStreamQuery", 13000, 2},
};

void Print(const char* how, const Query& q, int rc, int status, void* fn) {
  std::printf("%s %s %d %llu rc=%d status=%d -> %s\n", how, q.symbol, q.version, q.flags, rc, status,
              Where(fn).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const char* cudart_path = argc > 1 ? argv[1] : "libcudart.so.13";
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    std::printf("no driver: %s\n", dlerror());
    return 2;
  }
  auto* v2 = reinterpret_cast<GetProcAddressV2*>(dlsym(driver, "cuGetProcAddress_v2"));
  auto* v1 = reinterpret_cast<GetProcAddress*>(dlsym(driver, "cuGetProcAddress"));
  std::printf("dlsym cuGetProcAddress_v2 -> %s\n", Where(reinterpret_cast<void*>(v2)).c_str());
  std::printf("dlsym cuGetProcAddress -> %s\n", Where(reinterpret_cast<void*>(v1)).c_str());
  for (const char* name : {"cuStreamSynchronize", "cuStreamSynchronize_ptsz", "cuEventSynchronize",
                           "cuCtxSynchronize", "cuCtxSynchronize_v2", "cuMemAlloc_v2"}) {
    std::printf("dlsym %s -> %s\n", name, Where(dlsym(driver, name)).c_str());
  }
  for (const Query& q : kQueries) {
    void* fn = nullptr;
    int status = -1;
    int rc = v2 != nullptr ? v2(q.symbol, &fn, q.version, q.flags, &status) : -1;
    Print("cuGetProcAddress_v2", q, rc, status, fn);
    fn = nullptr;
    rc = v1 != nullptr ? v1(q.symbol, &fn, q.version, q.flags) : -1;
    Print("cuGetProcAddress", q, rc, -1, fn);
  }
  void* cudart = dlopen(cudart_path, RTLD_NOW | RTLD_LOCAL);
  if (cudart == nullptr) {
    std::printf("no runtime %s: %s\n", cudart_path, dlerror());
    return 0;
  }
  auto* by_version = reinterpret_cast<EntryPointByVersion*>(dlsym(cudart, "cudaGetDriverEntryPointByVersion"));
  auto* plain = reinterpret_cast<EntryPoint*>(dlsym(cudart, "cudaGetDriverEntryPoint"));
  for (const Query& q : kQueries) {
    void* fn = nullptr;
    int status = -1;
    int rc = by_version != nullptr ? by_version(q.symbol, &fn, q.version, q.flags, &status) : -1;
    Print("cudaGetDriverEntryPointByVersion", q, rc, status, fn);
    fn = nullptr;
    rc = plain != nullptr ? plain(q.symbol, &fn, q.flags, &status) : -1;
    Print("cudaGetDriverEntryPoint", q, rc, status, fn);
  }
  return 0;
}
