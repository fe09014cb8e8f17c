// One rank of an end-to-end scenario, run under LD_PRELOAD=libncclwatch.so over the sim.
//
//   preload_rank <scenario>
// Environment: RANK, WORLD_SIZE, NCCLWATCH_TEST_ID0/1 (hex ncclUniqueId bytes, from the
// driver). Prints "STREAM <n> 0x<ptr>" for each stream it uses, then "READY" once its work
// is done and complete, then waits for EOF on stdin (so the driver can read its published
// progress), tears down and exits 0. Any failed step exits 1 with a message.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "preload/hooks/nccl_abi_232.h"

// NCCL 2.29-2.31 entry points (the sim exports them; nccl.h 2.28.9 does not declare them).
extern "C" {
ncclResult_t ncclAllReduceConfig(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t,
                                 const ncclCollConfig_t*);
ncclResult_t ncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t, cudaStream_t);
ncclResult_t ncclWaitSignal(int nDesc, ncclWaitSignalDesc_t*, ncclComm_t, cudaStream_t);
ncclResult_t ncclCommGetUniqueId(ncclComm_t, ncclUniqueId*);
ncclResult_t ncclCommGrow(ncclComm_t, int nRanks, const ncclUniqueId*, int rank, ncclComm_t* newcomm, ncclConfig_t*);
ncclResult_t ncclCommSuspend(ncclComm_t, int flags);
ncclResult_t ncclCommResume(ncclComm_t);
}

// The sim runtime's count of CUDA calls made by the calling thread (sim/cudart/call_count.h).
extern "C" uint64_t ncclsim_rt_calls_by_this_thread(void);

namespace {

#define REQUIRE_OK(expr)                                                                        \
  do {                                                                                          \
    const int rc_ = static_cast<int>(expr);                                                     \
    if (rc_ != 0) {                                                                             \
      std::fprintf(stderr, "rank: %s failed with %d at line %d\n", #expr, rc_, __LINE__);       \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

int EnvInt(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) {
    std::fprintf(stderr, "rank: %s not set\n", name);
    std::exit(1);
  }
  return std::atoi(v);
}

ncclUniqueId IdFromEnv(const char* name) {
  const char* hex = std::getenv(name);
  ncclUniqueId id{};
  if (hex == nullptr || std::strlen(hex) != 2 * sizeof(id.internal)) {
    std::fprintf(stderr, "rank: %s missing or malformed\n", name);
    std::exit(1);
  }
  for (size_t i = 0; i < sizeof(id.internal); ++i) {
    id.internal[i] = static_cast<char>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
  }
  return id;
}

// Device buffers large enough for every op of the scenarios.
struct Buffers {
  float* send = nullptr;
  float* recv = nullptr;
  Buffers() {
    REQUIRE_OK(cudaMalloc(reinterpret_cast<void**>(&send), 4096 * sizeof(float)));
    REQUIRE_OK(cudaMalloc(reinterpret_cast<void**>(&recv), 4096 * sizeof(float)));
  }
};

cudaStream_t NewStream(int index) {
  cudaStream_t s;
  REQUIRE_OK(cudaStreamCreate(&s));
  std::printf("STREAM %d %p\n", index, static_cast<void*>(s));
  std::fflush(stdout);
  return s;
}

void WaitAsync(ncclComm_t comm) {
  for (int i = 0; i < 20000; ++i) {
    ncclResult_t state = ncclSuccess;
    REQUIRE_OK(ncclCommGetAsyncError(comm, &state));
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) REQUIRE_OK(state);
    usleep(1000);
  }
  std::fprintf(stderr, "rank: nonblocking communicator never became ready\n");
  std::exit(1);
}

void ReadyAndWaitForRelease() {
  std::printf("READY\n");
  std::fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0) {
  }
}

void RunCollectives(int rank, int nranks) {
  const int peer = rank ^ 1;
  ncclComm_t comm;
  REQUIRE_OK(ncclCommInitRank(&comm, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank));
  cudaStream_t s = NewStream(0);
  Buffers b;
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 11, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(ncclBroadcast(b.send, b.recv, 12, ncclFloat, 1, comm, s));
  REQUIRE_OK(ncclBcast(b.recv, 13, ncclInt32, 0, comm, s));
  REQUIRE_OK(ncclReduce(b.send, b.recv, 14, ncclFloat, ncclMax, 1, comm, s));
  REQUIRE_OK(ncclAllGather(b.send, b.recv, 15, ncclFloat, comm, s));
  REQUIRE_OK(ncclReduceScatter(b.send, b.recv, 16, ncclFloat, ncclProd, comm, s));
  REQUIRE_OK(ncclAlltoAll(b.send, b.recv, 17, ncclFloat, comm, s));
  REQUIRE_OK(ncclGather(b.send, b.recv, 18, ncclFloat, 0, comm, s));
  REQUIRE_OK(ncclScatter(b.send, b.recv, 19, ncclFloat, 1, comm, s));
  REQUIRE_OK(ncclGroupStart());
  REQUIRE_OK(ncclSend(b.send, 20, ncclFloat, peer, comm, s));
  REQUIRE_OK(ncclRecv(b.recv + 1024, 20, ncclFloat, peer, comm, s));
  REQUIRE_OK(ncclGroupEnd());
  // Simulated only: launches nothing, so it must not count, nor the op NCCL refuses in it
  // (no such datatype), whose record comes first.
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  REQUIRE_OK(ncclGroupStart());
  if (ncclAllReduce(b.send, b.recv, 24, ncclNumTypes, ncclSum, comm, s) != ncclInvalidArgument) {
    std::fprintf(stderr, "rank: an AllReduce of no datatype was not refused\n");
    std::exit(1);
  }
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 21, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(ncclGroupSimulateEnd(&sim));
  REQUIRE_OK(ncclGroupStart());
  REQUIRE_OK(ncclGroupStart());
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 22, ncclFloat, ncclMin, comm, s));
  REQUIRE_OK(ncclGroupEnd());
  REQUIRE_OK(ncclBroadcast(b.send, b.recv, 23, ncclFloat, 0, comm, s));
  REQUIRE_OK(ncclGroupEnd());
  REQUIRE_OK(cudaStreamSynchronize(s));
  ReadyAndWaitForRelease();
  REQUIRE_OK(ncclCommDestroy(comm));
}

void RunSplit(int rank, int nranks) {
  ncclComm_t parent, pairs, solo = nullptr, all;
  REQUIRE_OK(ncclCommInitRank(&parent, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank));
  REQUIRE_OK(ncclCommSplit(parent, rank % 2, rank, &pairs, nullptr));
  REQUIRE_OK(ncclCommSplit(parent, rank == 0 ? 5 : NCCL_SPLIT_NOCOLOR, 0, &solo, nullptr));
  if ((rank == 0) != (solo != nullptr)) {
    std::fprintf(stderr, "rank: unexpected NOCOLOR split result\n");
    std::exit(1);
  }
  REQUIRE_OK(ncclCommSplit(parent, 0, nranks - rank, &all, nullptr));
  cudaStream_t s = NewStream(0);
  Buffers b;
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 31, ncclFloat, ncclSum, pairs, s));
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 32, ncclFloat, ncclSum, pairs, s));
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 33, ncclFloat, ncclSum, parent, s));
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 34, ncclFloat, ncclSum, all, s));
  if (solo != nullptr) REQUIRE_OK(ncclAllReduce(b.send, b.recv, 35, ncclFloat, ncclSum, solo, s));
  REQUIRE_OK(cudaStreamSynchronize(s));
  ReadyAndWaitForRelease();
  for (ncclComm_t c : {all, solo, pairs, parent}) {
    if (c != nullptr) REQUIRE_OK(ncclCommDestroy(c));
  }
}

void RunNonblocking(int rank, int nranks) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm;
  const ncclResult_t init = ncclCommInitRankConfig(&comm, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank, &config);
  if (init != ncclSuccess && init != ncclInProgress) REQUIRE_OK(init);
  WaitAsync(comm);
  cudaStream_t s = NewStream(0);
  Buffers b;
  for (int i = 0; i < 3; ++i) {
    const ncclResult_t r = ncclAllReduce(b.send, b.recv, 40 + i, ncclFloat, ncclSum, comm, s);
    if (r != ncclSuccess && r != ncclInProgress) REQUIRE_OK(r);
    WaitAsync(comm);
  }
  REQUIRE_OK(cudaStreamSynchronize(s));
  ReadyAndWaitForRelease();
  REQUIRE_OK(ncclCommDestroy(comm));
}

// Several ranks in one process, driven from one thread through groups.
void RunInitAll() {
  ncclComm_t comms[2];
  REQUIRE_OK(ncclCommInitAll(comms, 2, nullptr));
  cudaStream_t streams[2];
  Buffers buffers[2];
  for (int d = 0; d < 2; ++d) {
    REQUIRE_OK(cudaSetDevice(d));
    streams[d] = NewStream(d);
  }
  REQUIRE_OK(cudaSetDevice(0));
  for (int round = 0; round < 2; ++round) {
    REQUIRE_OK(ncclGroupStart());
    for (int d = 0; d < 2; ++d) {
      REQUIRE_OK(ncclAllReduce(buffers[d].send, buffers[d].recv, 50 + round, ncclFloat, ncclSum, comms[d], streams[d]));
    }
    REQUIRE_OK(ncclGroupEnd());
  }
  for (int d = 0; d < 2; ++d) REQUIRE_OK(cudaStreamSynchronize(streams[d]));
  // The preload created device 1's event while device 0 was current: it must be restored.
  int current = -1;
  REQUIRE_OK(cudaGetDevice(&current));
  REQUIRE_OK(current != 0);
  // An error pending in the application must survive the hooks untouched.
  if (cudaSetDevice(1 << 20) == cudaSuccess) std::exit(1);
  REQUIRE_OK(ncclGroupStart());
  for (int d = 0; d < 2; ++d) {
    REQUIRE_OK(ncclAllReduce(buffers[d].send, buffers[d].recv, 52, ncclFloat, ncclSum, comms[d], streams[d]));
  }
  REQUIRE_OK(ncclGroupEnd());
  REQUIRE_OK(cudaGetLastError() != cudaErrorInvalidDevice);
  REQUIRE_OK(cudaGetLastError());
  for (int d = 0; d < 2; ++d) REQUIRE_OK(cudaStreamSynchronize(streams[d]));
  ReadyAndWaitForRelease();
  for (ncclComm_t c : comms) REQUIRE_OK(ncclCommDestroy(c));
}

// Two threads per process, each a rank of its own communicator.
void RunThreads(int rank, int nranks) {
  ncclComm_t comms[2] = {};
  std::thread workers[2];
  for (int t = 0; t < 2; ++t) {
    workers[t] = std::thread([t, rank, nranks, &comms] {
      REQUIRE_OK(cudaSetDevice(t));
      const char* id_name = t == 0 ? "NCCLWATCH_TEST_ID0" : "NCCLWATCH_TEST_ID1";
      REQUIRE_OK(ncclCommInitRank(&comms[t], nranks, IdFromEnv(id_name), rank));
      cudaStream_t s = NewStream(t);
      Buffers b;
      for (int i = 0; i < 5; ++i) {
        REQUIRE_OK(ncclAllReduce(b.send, b.recv, 100 * (t + 1) + i, ncclFloat, ncclSum, comms[t], s));
      }
      REQUIRE_OK(cudaStreamSynchronize(s));
    });
  }
  for (auto& w : workers) w.join();
  ReadyAndWaitForRelease();
  for (ncclComm_t c : comms) REQUIRE_OK(ncclCommDestroy(c));
}

// A DataLoader-like child forked mid-job must not publish as its parent.
void RunFork(int rank, int nranks) {
  ncclComm_t comm;
  REQUIRE_OK(ncclCommInitRank(&comm, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank));
  cudaStream_t s = NewStream(0);
  Buffers b;
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 60, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 61, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(cudaStreamSynchronize(s));
  const pid_t child = fork();
  if (child == 0) {
    // Whatever the child calls, the hooks must stay out of the parent's segment; exit()
    // runs the atexit handlers, which must not remove the parent's segment either.
    cudaStreamSynchronize(s);
    cudaDeviceSynchronize();
    ncclResult_t state;
    ncclCommGetAsyncError(comm, &state);
    std::exit(0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "rank: forked child failed\n");
    std::exit(1);
  }
  std::printf("CHILD %d\n", static_cast<int>(child));
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 62, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(cudaStreamSynchronize(s));
  ReadyAndWaitForRelease();
  REQUIRE_OK(ncclCommDestroy(comm));
}

// Work captured into a CUDA graph gets no completion event (recording one would break
// the capture); the capture must still succeed.
void RunCapture(int rank, int nranks) {
  ncclComm_t comm;
  REQUIRE_OK(ncclCommInitRank(&comm, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank));
  cudaStream_t s = NewStream(0);
  Buffers b;
  REQUIRE_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 70, ncclFloat, ncclSum, comm, s));
  cudaGraph_t graph = nullptr;
  REQUIRE_OK(cudaStreamEndCapture(s, &graph));
  REQUIRE_OK(cudaGetLastError());
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 71, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(cudaStreamSynchronize(s));
  ReadyAndWaitForRelease();
  REQUIRE_OK(ncclCommDestroy(comm));
}

// The CUDA calls each hooked op makes on the job's thread (the sim counts them), printed as
// "CALLS <what> <n>": steady state on a created stream, in a group, P2P, on the legacy
// stream, inside a capture, after it, after a failed driver begin (through our hook, found by
// dlsym), inside captures of the per-thread stream and into a graph, and after those.
// Records: 4 warm-up, then one per line in that order.
void RunHotPath(int rank, int nranks) {
  ncclComm_t comm;
  REQUIRE_OK(ncclCommInitRank(&comm, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank));
  cudaStream_t s = NewStream(0);
  Buffers b;
  for (int i = 0; i < 4; ++i) REQUIRE_OK(ncclAllReduce(b.send, b.recv, 16, ncclFloat, ncclSum, comm, s));
  usleep(500000);  // the tracker creates the pool's events within one 100 ms idle wake-up
  auto calls = [](const char* what, auto&& op) {
    const uint64_t before = ncclsim_rt_calls_by_this_thread();
    op();
    std::printf("CALLS %s %llu\n", what, static_cast<unsigned long long>(ncclsim_rt_calls_by_this_thread() - before));
  };
  calls("collective", [&] { REQUIRE_OK(ncclAllReduce(b.send, b.recv, 16, ncclFloat, ncclSum, comm, s)); });
  calls("group", [&] {
    REQUIRE_OK(ncclGroupStart());
    REQUIRE_OK(ncclAllReduce(b.send, b.recv, 16, ncclFloat, ncclSum, comm, s));
    REQUIRE_OK(ncclGroupEnd());
  });
  calls("p2p", [&] { REQUIRE_OK(ncclSend(b.send, 16, ncclFloat, rank, comm, s)); });
  calls("legacy", [&] { REQUIRE_OK(ncclAllReduce(b.send, b.recv, 16, ncclFloat, ncclSum, comm, nullptr)); });
  REQUIRE_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  calls("captured", [&] { REQUIRE_OK(ncclAllReduce(b.send, b.recv, 16, ncclFloat, ncclSum, comm, s)); });
  cudaGraph_t graph = nullptr;
  REQUIRE_OK(cudaStreamEndCapture(s, &graph));
  calls("after_capture", [&] { REQUIRE_OK(ncclAllReduce(b.send, b.recv, 16, ncclFloat, ncclSum, comm, s)); });
  // A driver begin that fails (an unknown capture mode: CUDA_ERROR_INVALID_VALUE) leaves no
  // capture counted.
  using DriverBegin = int (*)(void*, int);
  auto begin = reinterpret_cast<DriverBegin>(dlsym(RTLD_DEFAULT, "cuStreamBeginCapture_v2"));
  std::printf("DRIVER_BEGIN %d\n", begin != nullptr ? begin(s, 99) : -1);
  calls("after_driver_begin", [&] { REQUIRE_OK(ncclAllReduce(b.send, b.recv, 16, ncclFloat, ncclSum, comm, s)); });
  // This thread's default stream, and a capture into an existing graph.
  REQUIRE_OK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal));
  calls("per_thread_captured",
        [&] { REQUIRE_OK(ncclAllReduce(b.send, b.recv, 16, ncclFloat, ncclSum, comm, cudaStreamPerThread)); });
  cudaGraph_t per_thread_graph = nullptr;
  REQUIRE_OK(cudaStreamEndCapture(cudaStreamPerThread, &per_thread_graph));
  cudaGraph_t target = per_thread_graph;  // captured on, as the sim has no cudaGraphCreate
  REQUIRE_OK(cudaStreamBeginCaptureToGraph(s, target, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
  calls("to_graph_captured", [&] { REQUIRE_OK(ncclAllReduce(b.send, b.recv, 16, ncclFloat, ncclSum, comm, s)); });
  REQUIRE_OK(cudaStreamEndCapture(s, &target));
  calls("after_graphs", [&] { REQUIRE_OK(ncclAllReduce(b.send, b.recv, 16, ncclFloat, ncclSum, comm, s)); });
  REQUIRE_OK(cudaGetLastError());
  REQUIRE_OK(cudaStreamSynchronize(s));
  ReadyAndWaitForRelease();
  REQUIRE_OK(ncclCommDestroy(comm));
}

// The usual single-process multi-GPU init: several ncclCommInitRank inside one group,
// which NCCL carries out at ncclGroupEnd.
void RunGroupInit() {
  const ncclUniqueId id = IdFromEnv("NCCLWATCH_TEST_ID0");
  ncclComm_t comms[2];
  REQUIRE_OK(ncclGroupStart());
  for (int d = 0; d < 2; ++d) {
    REQUIRE_OK(cudaSetDevice(d));
    REQUIRE_OK(ncclCommInitRank(&comms[d], 2, id, d));
  }
  REQUIRE_OK(ncclGroupEnd());
  cudaStream_t streams[2];
  Buffers buffers[2];
  for (int d = 0; d < 2; ++d) {
    REQUIRE_OK(cudaSetDevice(d));
    streams[d] = NewStream(d);
  }
  REQUIRE_OK(ncclGroupStart());
  for (int d = 0; d < 2; ++d) {
    REQUIRE_OK(ncclAllReduce(buffers[d].send, buffers[d].recv, 80, ncclFloat, ncclSum, comms[d], streams[d]));
  }
  REQUIRE_OK(ncclGroupEnd());
  for (int d = 0; d < 2; ++d) REQUIRE_OK(cudaStreamSynchronize(streams[d]));
  ReadyAndWaitForRelease();
  for (ncclComm_t c : comms) REQUIRE_OK(ncclCommDestroy(c));
}

// NCCL 2.29+ in one process, ranks as threads (devices 0, 1, 0): ranks 0 and 1 of comm A
// run ncclAllReduceConfig (#1, 16 floats), then rank 1 signals rank 0, which waits for it;
// all three grow A into B (3 ranks; rank 0 passes the id from ncclCommGetUniqueId, rank 1
// none, rank 2 joins), AllReduce on B (#1); then A is suspended, resumed and suspended again.
void RunApi232() {
  ncclUniqueId id;
  REQUIRE_OK(ncclGetUniqueId(&id));
  ncclUniqueId grow_id{};
  ncclComm_t a[2] = {nullptr, nullptr}, b[3] = {nullptr, nullptr, nullptr};
  std::vector<std::thread> threads;
  std::atomic<int> grow_id_ready{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      REQUIRE_OK(cudaSetDevice(t % 2));
      cudaStream_t s;
      REQUIRE_OK(cudaStreamCreate(&s));
      Buffers buf;
      if (t < 2) {
        REQUIRE_OK(ncclCommInitRank(&a[t], 2, id, t));
        REQUIRE_OK(ncclAllReduceConfig(buf.send, buf.recv, 16, ncclFloat, ncclSum, a[t], s, nullptr));
        ncclWaitSignalDesc_t desc{1, 1, 0, 0};
        REQUIRE_OK(t == 1 ? ncclSignal(0, 0, 0, 0, a[t], s) : ncclWaitSignal(1, &desc, a[t], s));
        REQUIRE_OK(cudaStreamSynchronize(s));
        if (t == 0) {
          REQUIRE_OK(ncclCommGetUniqueId(a[0], &grow_id));
          grow_id_ready.store(1);
        }
      }
      while (t == 2 && grow_id_ready.load() == 0) usleep(1000);
      REQUIRE_OK(ncclCommGrow(t < 2 ? a[t] : nullptr, 3, t == 1 ? nullptr : &grow_id, t < 2 ? -1 : 2, &b[t], nullptr));
      REQUIRE_OK(ncclAllReduce(buf.send, buf.recv, 24, ncclFloat, ncclSum, b[t], s));
      REQUIRE_OK(cudaStreamSynchronize(s));
      if (t < 2) {
        REQUIRE_OK(ncclCommSuspend(a[t], 0));
        REQUIRE_OK(ncclCommResume(a[t]));
        REQUIRE_OK(ncclCommSuspend(a[t], 0));
      }
    });
  }
  for (auto& th : threads) th.join();
  std::printf("GROW_ID %s\n", [&] {
    std::string hex;
    char byte[3];
    for (char c : grow_id.internal) {
      std::snprintf(byte, sizeof byte, "%02x", static_cast<unsigned char>(c));
      hex += byte;
    }
    return hex;
  }().c_str());
  ReadyAndWaitForRelease();
  for (ncclComm_t c : a) {
    REQUIRE_OK(ncclCommResume(c));
    REQUIRE_OK(ncclCommDestroy(c));
  }
  for (ncclComm_t c : b) REQUIRE_OK(ncclCommDestroy(c));
}

void CUDART_CB WaitForStdinEof(void*) {
  char c;
  while (read(0, &c, 1) > 0) {
  }
}

// A rank stuck the way a hung job is: the GPU stream does not progress (a host function
// blocks it until the driver closes stdin) and the host waits in cudaStreamSynchronize.
void RunBlocked(int rank, int nranks) {
  ncclComm_t comm;
  REQUIRE_OK(ncclCommInitRank(&comm, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank));
  cudaStream_t s = NewStream(0);
  Buffers b;
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 90, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(cudaLaunchHostFunc(s, WaitForStdinEof, nullptr));
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 91, ncclFloat, ncclSum, comm, s));
  std::printf("READY\n");
  std::fflush(stdout);
  REQUIRE_OK(cudaStreamSynchronize(s));
  REQUIRE_OK(ncclCommDestroy(comm));
}

// A job that polls and never clears: cudaStreamQuery on a busy stream leaves
// cudaErrorNotReady pending for good. Rank 1 is a straggler: it issues AllReduce #2 only
// once released, so rank 0's #2 (issued while NotReady is pending) hangs until then. The
// pending error must read the same before and after the hooks ran.
void RunPolling(int rank, int nranks) {
  ncclComm_t comm;
  REQUIRE_OK(ncclCommInitRank(&comm, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank));
  cudaStream_t s = NewStream(0);
  Buffers b;
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 100, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(cudaStreamSynchronize(s));
  if (rank == 1) {
    ReadyAndWaitForRelease();
  } else {
    cudaStream_t busy;
    REQUIRE_OK(cudaStreamCreate(&busy));
    REQUIRE_OK(cudaLaunchHostFunc(busy, WaitForStdinEof, nullptr));
    REQUIRE_OK(cudaStreamQuery(busy) != cudaErrorNotReady);
    REQUIRE_OK(cudaPeekAtLastError() != cudaErrorNotReady);
    REQUIRE_OK(ncclAllReduce(b.send, b.recv, 101, ncclFloat, ncclSum, comm, s));
    REQUIRE_OK(cudaStreamQuery(s) != cudaErrorNotReady);
    REQUIRE_OK(cudaPeekAtLastError() != cudaErrorNotReady);
    std::printf("STILL_PENDING\n");
    ReadyAndWaitForRelease();
    REQUIRE_OK(cudaPeekAtLastError() != cudaErrorNotReady);
  }
  if (rank == 1) REQUIRE_OK(ncclAllReduce(b.send, b.recv, 101, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(cudaStreamSynchronize(s));
  cudaGetLastError();
  REQUIRE_OK(ncclCommDestroy(comm));
}

// A polling job whose transport hangs: every rank issues AllReduce #2, which never completes
// (NCCLSIM_FAULT=hang:seq=2), and polls it with cudaStreamQuery, leaving cudaErrorNotReady
// pending ("STILL_PENDING"). Once released the error must still be pending, untouched by the
// hooks; the rank then aborts the communicator, which releases its stream.
void RunPollingHang(int rank, int nranks) {
  ncclComm_t comm;
  REQUIRE_OK(ncclCommInitRank(&comm, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank));
  cudaStream_t s = NewStream(0);
  Buffers b;
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 100, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(cudaStreamSynchronize(s));
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 101, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(cudaStreamQuery(s) != cudaErrorNotReady);
  REQUIRE_OK(cudaPeekAtLastError() != cudaErrorNotReady);
  std::printf("STILL_PENDING\n");
  ReadyAndWaitForRelease();
  REQUIRE_OK(cudaPeekAtLastError() != cudaErrorNotReady);
  REQUIRE_OK(ncclCommAbort(comm));
  cudaGetLastError();
}

// Op sequences that diverge at #2: rank 1 issues a Broadcast where the others issue an
// AllReduce. Under NCCLSIM_FAULT=mismatch_completes:seq=2 the pair completes anyway (as real
// NCCL can, on corrupt data); #3 completes too ("COMPLETED 3"); #4 then waits until the
// driver kills the ranks (NCCLSIM_FAULT hang:seq=4). No stdin: it runs under scripts/launch.
void RunDiverge(int rank, int nranks) {
  ncclComm_t comm;
  REQUIRE_OK(ncclCommInitRank(&comm, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank));
  cudaStream_t s = NewStream(0);
  Buffers b;
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 100, ncclFloat, ncclSum, comm, s));
  if (rank == 1) REQUIRE_OK(ncclBroadcast(b.send, b.recv, 100, ncclFloat, 0, comm, s));
  else REQUIRE_OK(ncclAllReduce(b.send, b.recv, 100, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 100, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(cudaStreamSynchronize(s));
  std::printf("COMPLETED 3\n");
  std::fflush(stdout);
  REQUIRE_OK(ncclAllReduce(b.send, b.recv, 100, ncclFloat, ncclSum, comm, s));
  REQUIRE_OK(cudaStreamSynchronize(s));
  REQUIRE_OK(ncclCommDestroy(comm));
}

// One process drives 4 ranks (ncclCommInitAll over 4 devices), one thread per rank. The
// threads of the last `stragglers` ranks (rank 3; ranks 2-3) issue AllReduce #2 only once released.
void RunInitAll4(int stragglers) {
  constexpr int kRanks = 4;
  ncclComm_t comms[kRanks];
  REQUIRE_OK(ncclCommInitAll(comms, kRanks, nullptr));
  std::atomic<int> issued{0};
  std::atomic<bool> released{false};
  std::vector<std::thread> threads;
  for (int d = 0; d < kRanks; ++d) {
    threads.emplace_back([&, d] {
      REQUIRE_OK(cudaSetDevice(d));
      cudaStream_t s = NewStream(d);
      Buffers b;
      REQUIRE_OK(ncclAllReduce(b.send, b.recv, 110, ncclFloat, ncclSum, comms[d], s));
      REQUIRE_OK(cudaStreamSynchronize(s));
      if (d >= kRanks - stragglers) {
        while (!released.load()) usleep(1000);
      }
      REQUIRE_OK(ncclAllReduce(b.send, b.recv, 111, ncclFloat, ncclSum, comms[d], s));
      issued.fetch_add(1);
      REQUIRE_OK(cudaStreamSynchronize(s));
    });
  }
  while (issued.load() < kRanks - stragglers) usleep(1000);
  ReadyAndWaitForRelease();
  released.store(true);
  for (auto& t : threads) t.join();
  for (ncclComm_t c : comms) REQUIRE_OK(ncclCommDestroy(c));
}

// 40 communicators split off, used and destroyed right away (their completion events may
// still be pending when the next one is created), then a 41st on which rank 1 straggles:
// rank 0's AllReduce #1 on it hangs. Prints "HUNG_COLOR <color>" (the split color).
void RunManyComms(int rank, int nranks) {
  constexpr int kLoops = 40;
  ncclComm_t parent;
  REQUIRE_OK(ncclCommInitRank(&parent, nranks, IdFromEnv("NCCLWATCH_TEST_ID0"), rank));
  cudaStream_t s = NewStream(0);
  Buffers b;
  for (int i = 0; i < kLoops; ++i) {
    ncclComm_t child;
    REQUIRE_OK(ncclCommSplit(parent, i, rank, &child, nullptr));
    REQUIRE_OK(ncclAllReduce(b.send, b.recv, 120, ncclFloat, ncclSum, child, s));
    REQUIRE_OK(ncclCommDestroy(child));
  }
  REQUIRE_OK(cudaStreamSynchronize(s));
  ncclComm_t hung;
  REQUIRE_OK(ncclCommSplit(parent, kLoops, rank, &hung, nullptr));
  std::printf("HUNG_COLOR %d\n", kLoops);
  if (rank == 0) REQUIRE_OK(ncclAllReduce(b.send, b.recv, 121, ncclFloat, ncclSum, hung, s));
  ReadyAndWaitForRelease();
  if (rank == 1) REQUIRE_OK(ncclAllReduce(b.send, b.recv, 121, ncclFloat, ncclSum, hung, s));
  REQUIRE_OK(cudaStreamSynchronize(s));
  REQUIRE_OK(ncclCommDestroy(hung));
  REQUIRE_OK(ncclCommDestroy(parent));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: preload_rank collectives|split|nonblocking|initall|threads|fork|capture|hotpath|groupinit|api232|blocked|polling|polling_hang|diverge|initall4|initall4_pair|manycomms\n");
    return 2;
  }
  const std::string scenario = argv[1];
  if (scenario == "initall") {
    RunInitAll();
    return 0;
  }
  if (scenario == "groupinit") {
    RunGroupInit();
    return 0;
  }
  if (scenario == "initall4") {
    RunInitAll4(1);
    return 0;
  }
  if (scenario == "initall4_pair") {
    RunInitAll4(2);
    return 0;
  }
  if (scenario == "api232") {
    RunApi232();
    return 0;
  }
  const int rank = EnvInt("RANK");
  const int nranks = EnvInt("WORLD_SIZE");
  if (scenario == "collectives") RunCollectives(rank, nranks);
  else if (scenario == "split") RunSplit(rank, nranks);
  else if (scenario == "nonblocking") RunNonblocking(rank, nranks);
  else if (scenario == "threads") RunThreads(rank, nranks);
  else if (scenario == "fork") RunFork(rank, nranks);
  else if (scenario == "capture") RunCapture(rank, nranks);
  else if (scenario == "hotpath") RunHotPath(rank, nranks);
  else if (scenario == "blocked") RunBlocked(rank, nranks);
  else if (scenario == "polling") RunPolling(rank, nranks);
  else if (scenario == "polling_hang") RunPollingHang(rank, nranks);
  else if (scenario == "diverge") RunDiverge(rank, nranks);
  else if (scenario == "manycomms") RunManyComms(rank, nranks);
  else return 2;
  return 0;
}
