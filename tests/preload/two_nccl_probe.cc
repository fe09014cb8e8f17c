// Two NCCL libraries in one process (as torch's and JAX's), each dlopen'ed RTLD_LOCAL and
// used through dlsym, under the preload. usage: two_nccl_probe LIB_A LIB_B
// Asserts (exit 1, one line, on the first failure):
//  - each library's dlsym'ed ncclAllReduce is a distinct hook of the preload;
//  - a communicator made through each library works through that library's hooks;
//  - the preload's global ncclAllReduce, given B's communicator, runs B's function (routing
//    by communicator): the error it provokes is in B's ncclGetLastError, not in A's.
#include <dlfcn.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <string>

extern "C" ncclResult_t ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                      cudaStream_t) __attribute__((weak));

namespace {

using AllReduceFn = ncclResult_t(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);

int Fail(const std::string& what) {
  std::printf("FAIL: %s\n", what.c_str());
  return 1;
}

bool InPreload(AllReduceFn* fn) {
  void* address = reinterpret_cast<void*>(fn);
  Dl_info info{};
  return address != nullptr && dladdr(address, &info) != 0 && std::strstr(info.dli_fname, "libncclwatch") != nullptr;
}

struct Nccl {
  void* handle = nullptr;
  AllReduceFn* all_reduce = nullptr;
  const char* (*last_error)(ncclComm_t) = nullptr;
  ncclComm_t comm = nullptr;

  bool Open(const char* path, std::string* error) {
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return *error = dlerror(), false;
    auto* get_id = reinterpret_cast<ncclResult_t (*)(ncclUniqueId*)>(dlsym(handle, "ncclGetUniqueId"));
    auto* init = reinterpret_cast<ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int)>(dlsym(handle, "ncclCommInitRank"));
    all_reduce = reinterpret_cast<AllReduceFn*>(dlsym(handle, "ncclAllReduce"));
    last_error = reinterpret_cast<const char* (*)(ncclComm_t)>(dlsym(handle, "ncclGetLastError"));
    if (get_id == nullptr || init == nullptr || all_reduce == nullptr || last_error == nullptr) {
      return *error = std::string("dlsym failed in ") + path, false;
    }
    ncclUniqueId id;
    if (get_id(&id) != ncclSuccess || init(&comm, 1, id, 0) != ncclSuccess) {
      return *error = std::string("1-rank init failed in ") + path, false;
    }
    return true;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return Fail("usage: two_nccl_probe LIB_A LIB_B");
  Nccl a, b;
  std::string error;
  if (!a.Open(argv[1], &error) || !b.Open(argv[2], &error)) return Fail(error);
  if (a.handle == b.handle) return Fail("the two paths loaded one library");
  if (!InPreload(a.all_reduce) || !InPreload(b.all_reduce) || a.all_reduce == b.all_reduce) {
    return Fail("each library's ncclAllReduce must be its own hook of the preload");
  }
  static float buf[16];
  if (a.all_reduce(buf, buf, 16, ncclFloat, ncclSum, a.comm, nullptr) != ncclSuccess ||
      b.all_reduce(buf, buf, 16, ncclFloat, ncclSum, b.comm, nullptr) != ncclSuccess) {
    return Fail("an AllReduce through a library's own hook failed");
  }
  if (ncclAllReduce == nullptr) return Fail("not running under the preload");
  const auto bad_type = static_cast<ncclDataType_t>(99);
  if (ncclAllReduce(buf, buf, 16, bad_type, ncclSum, b.comm, nullptr) != ncclInvalidArgument) {
    return Fail("the global hook with B's communicator must return B's ncclInvalidArgument");
  }
  const std::string in_a = a.last_error(nullptr), in_b = b.last_error(nullptr);
  if (in_b.find("datatype") == std::string::npos || in_a.find("datatype") != std::string::npos) {
    return Fail("the bad call ran in the wrong library: A says '" + in_a + "', B says '" + in_b + "'");
  }
  std::printf("ok: two libraries, distinct hooks, global hook routed to B ('%s')\n", in_b.c_str());
  return 0;
}
