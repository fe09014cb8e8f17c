// A rank that reaches NCCL and the CUDA runtime only through dlopen(RTLD_LOCAL) + dlsym, as
// JAX/XLA's DSO loader and nccl4py do: no NEEDED entry, nothing in the global scope.
//
// usage (under scripts/launch, which sets RANK, WORLD_SIZE, LOCAL_RANK):
//   dlsym_rank --lib-dir DIR --id-dir DIR [--mode allreduce|config|signal] [--steps N]
//              [--step-ms MS] [--straggler-rank R --straggler-step S --straggler-sec T]
//              [--sync runtime|driver|proc|proc-ptds|entry-point]
// Each step: (signal mode: rank 1 ncclSignal -> rank 0, rank 0 ncclWaitSignal on rank 1)
// one AllReduce (ncclAllReduceConfig in config mode), then a host sync of its stream. The
// straggler stalls in StallInCheckpointLoad before its step's NCCL calls.
// The sync is cudaStreamSynchronize (runtime), or the driver's cuStreamSynchronize found the
// ways a static CUDA runtime (CuPy, XLA) finds it, with libcuda.so.1 dlopen'ed RTLD_LOCAL
// (DIR's, else the system's): by dlsym (driver); through cuGetProcAddress_v2, itself found by
// dlsym, at CUDA 13.0 with the default flags (proc) or per-thread default streams (proc-ptds,
// which yields cuStreamSynchronize_ptsz); through the runtime's cudaGetDriverEntryPoint
// (entry-point).
#include <dlfcn.h>
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <thread>

namespace {

struct Args {
  std::string lib_dir, id_dir, mode = "allreduce", sync = "runtime";
  int steps = 1000, step_ms = 20, straggler_rank = -1, straggler_step = -1;
  double straggler_sec = 60;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "[rank %s] dlsym_rank: %s\n", std::getenv("RANK") ? std::getenv("RANK") : "0", what.c_str());
  std::exit(1);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--lib-dir") a.lib_dir = v;
    else if (k == "--id-dir") a.id_dir = v;
    else if (k == "--mode") a.mode = v;
    else if (k == "--steps") a.steps = std::stoi(v);
    else if (k == "--step-ms") a.step_ms = std::stoi(v);
    else if (k == "--straggler-rank") a.straggler_rank = std::stoi(v);
    else if (k == "--straggler-step") a.straggler_step = std::stoi(v);
    else if (k == "--straggler-sec") a.straggler_sec = std::stod(v);
    else if (k == "--sync") a.sync = v;
    else Die("unknown option " + k);
  }
  if (a.lib_dir.empty() || a.id_dir.empty()) Die("--lib-dir and --id-dir are required");
  if (a.mode != "allreduce" && a.mode != "config" && a.mode != "signal") Die("bad --mode " + a.mode);
  if (a.sync != "runtime" && a.sync != "driver" && a.sync != "proc" && a.sync != "proc-ptds" &&
      a.sync != "entry-point") {
    Die("bad --sync " + a.sync);
  }
  return a;
}

// A library opened RTLD_LOCAL and its functions, looked up by name.
class Dso {
 public:
  Dso(const std::string& path) : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) Die(std::string("dlopen: ") + dlerror());
  }
  // The first of `paths` that opens.
  Dso(std::initializer_list<std::string> paths) {
    for (const std::string& path : paths) {
      if ((handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) return;
    }
    Die(std::string("dlopen: ") + dlerror());
  }
  template <typename Fn>
  Fn* Get(const char* name) {
    void* fn = dlsym(handle_, name);
    if (fn == nullptr) Die(std::string("dlsym ") + name + ": " + dlerror());
    return reinterpret_cast<Fn*>(fn);
  }

 private:
  void* handle_;
};

void Check(const char* what, int rc) {
  if (rc != 0) Die(std::string(what) + " failed with " + std::to_string(rc));
}

ncclUniqueId ShareId(Dso* nccl, int rank, const std::string& dir) {
  const std::string path = dir + "/nccl_unique_id";
  ncclUniqueId id{};
  if (rank == 0) {
    Check("ncclGetUniqueId", nccl->Get<ncclResult_t(ncclUniqueId*)>("ncclGetUniqueId")(&id));
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    std::ofstream(tmp, std::ios::binary).write(id.internal, sizeof id.internal);
    std::filesystem::rename(tmp, path);
    return id;
  }
  for (int i = 0; i < 1200 && !std::filesystem::exists(path); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::ifstream in(path, std::ios::binary);
  if (!in.read(id.internal, sizeof id.internal)) Die("no unique id in " + path);
  return id;
}

__attribute__((noinline)) void StallInCheckpointLoad(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  asm volatile("");  // keeps this frame
}

struct WaitDesc {  // ncclWaitSignalDesc_t of NCCL 2.29+
  int opCnt, peer, sigIdx, ctx;
};

using StreamSync = int(void*);

// The stream sync `how` names (see the top of this file); 0 of cuGetProcAddress's flags is
// CU_GET_PROC_ADDRESS_DEFAULT, 2 CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, and 0 of
// cudaGetDriverEntryPoint's cudaEnableDefault (cuda.h, driver_types.h).
StreamSync* FindStreamSync(const std::string& how, const std::string& lib_dir, Dso* cudart) {
  if (how == "runtime") return cudart->Get<StreamSync>("cudaStreamSynchronize");
  // Loaded first, as a runtime has it by now (the sim's loads it only when asked, by soname).
  static Dso driver({lib_dir + "/libcuda.so.1", "libcuda.so.1"});
  void* fn = nullptr;
  int status = -1;
  int rc = 0;
  if (how == "entry-point") {
    using EntryPoint = int(const char*, void**, unsigned long long, int*);
    rc = cudart->Get<EntryPoint>("cudaGetDriverEntryPoint")("cuStreamSynchronize", &fn, 0, &status);
  } else {
    if (how == "driver") return driver.Get<StreamSync>("cuStreamSynchronize");
    using GetProcAddress = int(const char*, void**, int, unsigned long long, int*);
    rc = driver.Get<GetProcAddress>("cuGetProcAddress_v2")("cuStreamSynchronize", &fn, 13000,
                                                          how == "proc-ptds" ? 2 : 0, &status);
  }
  if (rc != 0 || fn == nullptr) {
    Die(how + " lookup of cuStreamSynchronize: rc " + std::to_string(rc) + ", status " + std::to_string(status));
  }
  return reinterpret_cast<StreamSync*>(fn);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = Parse(argc, argv);
  const int rank = std::atoi(std::getenv("RANK") ? std::getenv("RANK") : "0");
  const int world = std::atoi(std::getenv("WORLD_SIZE") ? std::getenv("WORLD_SIZE") : "1");
  const int local_rank = std::atoi(std::getenv("LOCAL_RANK") ? std::getenv("LOCAL_RANK") : "0");
  Dso cudart(args.lib_dir + "/libcudart.so.13");
  Dso nccl(args.lib_dir + "/libnccl.so.2");

  int ndev = 0;
  Check("cudaGetDeviceCount", cudart.Get<int(int*)>("cudaGetDeviceCount")(&ndev));
  Check("cudaSetDevice", cudart.Get<int(int)>("cudaSetDevice")(local_rank % (ndev > 0 ? ndev : 1)));
  void* stream = nullptr;
  Check("cudaStreamCreate", cudart.Get<int(void**)>("cudaStreamCreate")(&stream));
  constexpr size_t kCount = 1024;
  void* buf = nullptr;
  Check("cudaMalloc", cudart.Get<int(void**, size_t)>("cudaMalloc")(&buf, kCount * sizeof(float)));
  StreamSync* sync = FindStreamSync(args.sync, args.lib_dir, &cudart);

  const ncclUniqueId id = ShareId(&nccl, rank, args.id_dir);
  ncclComm_t comm = nullptr;
  Check("ncclCommInitRank", nccl.Get<ncclResult_t(ncclComm_t*, int, ncclUniqueId, int)>("ncclCommInitRank")(
                                &comm, world, id, rank));
  using AllReduce = ncclResult_t(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, void*);
  using AllReduceConfig = ncclResult_t(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, void*,
                                       const void*);
  auto* all_reduce = nccl.Get<AllReduce>("ncclAllReduce");
  AllReduceConfig* all_reduce_config = args.mode == "config" ? nccl.Get<AllReduceConfig>("ncclAllReduceConfig") : nullptr;
  using Signal = ncclResult_t(int, int, int, unsigned int, ncclComm_t, void*);
  using WaitSignal = ncclResult_t(int, WaitDesc*, ncclComm_t, void*);
  Signal* signal = args.mode == "signal" ? nccl.Get<Signal>("ncclSignal") : nullptr;
  WaitSignal* wait_signal = args.mode == "signal" ? nccl.Get<WaitSignal>("ncclWaitSignal") : nullptr;

  for (int step = 0; step < args.steps; ++step) {
    if (rank == args.straggler_rank && step == args.straggler_step) StallInCheckpointLoad(args.straggler_sec);
    std::this_thread::sleep_for(std::chrono::milliseconds(args.step_ms));
    if (signal != nullptr && rank == 1) Check("ncclSignal", signal(0, 0, 0, 0, comm, stream));
    if (wait_signal != nullptr && rank == 0) {
      WaitDesc desc{1, 1, 0, 0};
      Check("ncclWaitSignal", wait_signal(1, &desc, comm, stream));
    }
    if (all_reduce_config != nullptr) {
      Check("ncclAllReduceConfig", all_reduce_config(buf, buf, kCount, ncclFloat32, ncclSum, comm, stream, nullptr));
    } else {
      Check("ncclAllReduce", all_reduce(buf, buf, kCount, ncclFloat32, ncclSum, comm, stream));
    }
    Check("stream sync", sync(stream));
  }
  Check("ncclCommDestroy", nccl.Get<ncclResult_t(ncclComm_t)>("ncclCommDestroy")(comm));
  return 0;
}
