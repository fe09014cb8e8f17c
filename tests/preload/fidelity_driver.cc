// The driver half of fidelity_probe: the driver's host syncs through every way a process
// reaches them (its exported symbols, cuGetProcAddress and _v2, cudaGetDriverEntryPoint and
// ByVersion with their _ptsz forms, dlsym), printing every return code, symbolStatus, the
// errno each call leaves (set to a sentinel before it) and, after them all, the runtime's
// pending last error, which none of them may touch (the driver has no last error of its own:
// it reports through return values). A function a lookup found is printed as the exported
// name dlsym finds at the same address in libcuda.so.1, never as an address: with the
// preload both are the same hook of that function, without it the driver's own.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cerrno>
#include <cstdio>
#include <initializer_list>
#include <string_view>

#undef cuGetProcAddress

// Exported by every libcuda.so.1 since CUDA 11.3 and 7.0; cuda.h declares them only for its own
// build (__CUDA_API_VERSION_INTERNAL) or for per-thread default streams.
extern "C" CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags);
extern "C" CUresult cuStreamSynchronize_ptsz(CUstream stream);
extern "C" cudaError_t cudaGetDriverEntryPoint_ptsz(const char*, void**, unsigned long long,
                                                    cudaDriverEntryPointQueryResult*);
extern "C" cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char*, void**, unsigned int, unsigned long long,
                                                             cudaDriverEntryPointQueryResult*);

namespace {

constexpr int kErrnoSentinel = 4243;
void* g_driver = nullptr;  // libcuda.so.1, RTLD_NOLOAD: the probe links it

void Line(const char* what, int rc) { std::printf("%s rc=%d errno=%d\n", what, rc, errno); }
#define DRIVER_CALL(what, expr) \
  do {                          \
    errno = kErrnoSentinel;     \
    const int rc = (expr);      \
    Line(what, rc);             \
  } while (0)

// Which of the candidate exported names `fn` is; "null", or "other" for none of them.
const char* NameOf(void* fn, std::initializer_list<const char*> candidates) {
  if (fn == nullptr) return "null";
  for (const char* name : candidates) {
    if (g_driver != nullptr && dlsym(g_driver, name) == fn) return name;
  }
  return "other";
}

using StreamSync = CUresult(CUstream);
using GetProcAddressV2 = CUresult(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

struct Query {
  const char* symbol;
  int version;
  cuuint64_t flags;
  std::initializer_list<const char*> candidates;
};

const Query kQueries[] = {
    {"cuStreamSynchronize", 13000, CU_GET_PROC_ADDRESS_DEFAULT, {"cuStreamSynchronize", "cuStreamSynchronize_ptsz"}},
    {"cuStreamSynchronize", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
     {"cuStreamSynchronize", "cuStreamSynchronize_ptsz"}},
    {"cuStreamSynchronize", 6050, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
     {"cuStreamSynchronize", "cuStreamSynchronize_ptsz"}},
    {"cuEventSynchronize", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, {"cuEventSynchronize"}},
    {"cuCtxSynchronize", 12080, CU_GET_PROC_ADDRESS_DEFAULT, {"cuCtxSynchronize", "cuCtxSynchronize_v2"}},
    {"cuCtxSynchronize", 13000, CU_GET_PROC_ADDRESS_DEFAULT, {"cuCtxSynchronize", "cuCtxSynchronize_v2"}},
    {"cuGetProcAddress", 11030, CU_GET_PROC_ADDRESS_DEFAULT, {"cuGetProcAddress", "cuGetProcAddress_v2"}},
    {"cuGetProcAddress", 13000, CU_GET_PROC_ADDRESS_DEFAULT, {"cuGetProcAddress", "cuGetProcAddress_v2"}},
    {"cuGetProcAddress", 11020, CU_GET_PROC_ADDRESS_DEFAULT, {"cuGetProcAddress", "cuGetProcAddress_v2"}},
    {"cuMemAlloc", 13000, CU_GET_PROC_ADDRESS_DEFAULT, {"cuMemAlloc", "cuMemAlloc_v2"}},
    {"cuStreamQuery", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, {"cuStreamQuery", "cuStreamQuery_ptsz"}},
    {"cuNcclwatchNoSuchFunction", 13000, CU_GET_PROC_ADDRESS_DEFAULT, {}},
    {"cuStreamSynchronize_ptsz", 13000, CU_GET_PROC_ADDRESS_DEFAULT, {"cuStreamSynchronize_ptsz"}},
    {"cuStreamSynchronize", 13010, CU_GET_PROC_ADDRESS_DEFAULT, {}},  // newer than the driver
    {"cuStreamSynchronize", 13000, 0x8, {}},                           // unknown flag
};

void PrintLookup(const char* via, const Query& q, int rc, CUdriverProcAddressQueryResult status, void* fn) {
  std::printf("%s(%s, %d, %llu) rc=%d errno=%d status=%d -> %s\n", via, q.symbol, q.version,
              static_cast<unsigned long long>(q.flags), rc, errno, static_cast<int>(status),
              NameOf(fn, q.candidates));
}

// A sync a lookup handed out, called: the hook (or the driver's own) must answer as the driver.
void CallFound(const char* what, const Query& q, void* fn, CUstream stream, CUcontext context) {
  if (fn == nullptr) return;
  errno = kErrnoSentinel;
  int rc = -1;
  const char* name = NameOf(fn, q.candidates);
  if (name == std::string_view("cuCtxSynchronize")) {
    rc = reinterpret_cast<CUresult (*)()>(fn)();
  } else if (name == std::string_view("cuCtxSynchronize_v2")) {
    rc = reinterpret_cast<CUresult (*)(CUcontext)>(fn)(context);
  } else if (name == std::string_view("cuStreamSynchronize") || name == std::string_view("cuStreamSynchronize_ptsz")) {
    rc = reinterpret_cast<StreamSync*>(fn)(stream);
  } else if (name == std::string_view("cuGetProcAddress_v2")) {
    // cuGetProcAddress found through itself finds cuStreamSynchronize again, and the same.
    void* again = nullptr;
    void* direct = nullptr;
    CUdriverProcAddressQueryResult status{};
    rc = reinterpret_cast<GetProcAddressV2*>(fn)("cuStreamSynchronize", &again, 13000, 0, &status);
    cuGetProcAddress_v2("cuStreamSynchronize", &direct, 13000, 0, &status);
    std::printf("  %s through itself: same as direct=%d\n", what, again == direct && again != nullptr);
  } else {
    return;
  }
  std::printf("  called %s rc=%d errno=%d\n", what, rc, errno);
}

}  // namespace

// cudaGetDriverEntryPoint is deprecated in CUDA 13 and still exported: static runtimes call it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void RunDriverChecks() {
  g_driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  std::printf("driver loaded=%d\n", g_driver != nullptr);
  // A pending runtime error that none of the driver's calls, nor any lookup, may clear or set.
  std::printf("cudaSetDevice(-1) rc=%d\n", static_cast<int>(cudaSetDevice(-1)));
  DRIVER_CALL("cuInit", cuInit(0));
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CUevent event = nullptr;
  DRIVER_CALL("cuDeviceGet", cuDeviceGet(&device, 0));
  DRIVER_CALL("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&context, device));
  DRIVER_CALL("cuCtxSetCurrent", cuCtxSetCurrent(context));
  DRIVER_CALL("cuStreamCreate", cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  DRIVER_CALL("cuEventCreate", cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  DRIVER_CALL("cuEventRecord", cuEventRecord(event, stream));
  // Through the exported symbols.
  DRIVER_CALL("cuStreamSynchronize", cuStreamSynchronize(stream));
  DRIVER_CALL("cuStreamSynchronize_ptsz", cuStreamSynchronize_ptsz(stream));
  DRIVER_CALL("cuStreamSynchronize(legacy)", cuStreamSynchronize(CU_STREAM_LEGACY));
  DRIVER_CALL("cuEventSynchronize", cuEventSynchronize(event));
  DRIVER_CALL("cuEventSynchronize(NULL)", cuEventSynchronize(nullptr));
  DRIVER_CALL("cuCtxSynchronize", cuCtxSynchronize());
  DRIVER_CALL("cuCtxSynchronize_v2", cuCtxSynchronize_v2(context));
  std::printf("cudaPeekAtLastError=%d\n", static_cast<int>(cudaPeekAtLastError()));
  // Through the lookups.
  for (const Query& q : kQueries) {
    void* fn = reinterpret_cast<void*>(1);
    auto status = static_cast<CUdriverProcAddressQueryResult>(77);
    errno = kErrnoSentinel;
    int rc = cuGetProcAddress_v2(q.symbol, &fn, q.version, q.flags, &status);
    PrintLookup("cuGetProcAddress_v2", q, rc, status, fn);
    CallFound("cuGetProcAddress_v2's", q, fn, stream, context);
    fn = reinterpret_cast<void*>(1);
    errno = kErrnoSentinel;
    rc = cuGetProcAddress(q.symbol, &fn, q.version, q.flags);
    PrintLookup("cuGetProcAddress", q, rc, status, fn);
    CallFound("cuGetProcAddress's", q, fn, stream, context);
    for (int ptsz = 0; ptsz < 2; ++ptsz) {
      fn = reinterpret_cast<void*>(1);
      cudaDriverEntryPointQueryResult rt_status = static_cast<cudaDriverEntryPointQueryResult>(77);
      errno = kErrnoSentinel;
      rc = ptsz ? cudaGetDriverEntryPointByVersion_ptsz(q.symbol, &fn, q.version, q.flags, &rt_status)
                : cudaGetDriverEntryPointByVersion(q.symbol, &fn, q.version, q.flags, &rt_status);
      PrintLookup(ptsz ? "cudaGetDriverEntryPointByVersion_ptsz" : "cudaGetDriverEntryPointByVersion", q, rc,
                  static_cast<CUdriverProcAddressQueryResult>(rt_status), fn);
      CallFound("the entry point's", q, fn, stream, context);
      fn = reinterpret_cast<void*>(1);
      errno = kErrnoSentinel;
      rc = ptsz ? cudaGetDriverEntryPoint_ptsz(q.symbol, &fn, q.flags, &rt_status)
                : cudaGetDriverEntryPoint(q.symbol, &fn, q.flags, &rt_status);
      PrintLookup(ptsz ? "cudaGetDriverEntryPoint_ptsz" : "cudaGetDriverEntryPoint", q, rc,
                  static_cast<CUdriverProcAddressQueryResult>(rt_status), fn);
      // Each lookup's error, if any, is the runtime's last error now: read it, as a job would.
      std::printf("  cudaGetLastError=%d\n", static_cast<int>(cudaGetLastError()));
    }
  }
  // Through dlsym, in the driver and in the global scope, with a runtime error pending again.
  std::printf("cudaSetDevice(-1) rc=%d\n", static_cast<int>(cudaSetDevice(-1)));
  for (const char* name : {"cuStreamSynchronize", "cuStreamSynchronize_ptsz", "cuCtxSynchronize_v2",
                           "cuGetProcAddress_v2", "cuNcclwatchNoSuchFunction"}) {
    void* in_driver = g_driver != nullptr ? dlsym(g_driver, name) : nullptr;
    const char* error = dlerror();
    void* global = dlsym(RTLD_DEFAULT, name);
    std::printf("dlsym(%s) found=%d error=%d global=%s\n", name, in_driver != nullptr, error != nullptr,
                global == nullptr ? "null" : global == in_driver ? "same" : "other");
  }
  if (void* sync = g_driver != nullptr ? dlsym(g_driver, "cuStreamSynchronize") : nullptr) {
    DRIVER_CALL("dlsym'ed cuStreamSynchronize", reinterpret_cast<StreamSync*>(sync)(stream));
  }
  DRIVER_CALL("cuEventDestroy", cuEventDestroy(event));
  DRIVER_CALL("cuStreamDestroy", cuStreamDestroy(stream));
  std::printf("cudaPeekAtLastError=%d\n", static_cast<int>(cudaPeekAtLastError()));
  std::printf("cudaGetLastError=%d\n", static_cast<int>(cudaGetLastError()));
}
#pragma GCC diagnostic pop
