// Per-call host time of each hooked family, over the sim in no-op mode (NCCLSIM_NOOP=1), so
// that with LD_PRELOAD=libncclwatch.so the difference is the hook alone. One run prints two
// lines per timed batch:
//
//   first <family> <ns of the batch's first call>
//   sample <family> <ns per call of the other calls of the batch>
//
// The first call follows a 10 ms pause and finds the code and data of the call, the sim's and
// ours, cold (5-15 us on the developers' VM, against 0.1-0.4 us warm): timed with the others,
// it added its cold misses divided by the batch size, an arbitrary 128, to every call, and
// its spread (the hypervisor decides how cold the pause leaves a vCPU) swung the per-call
// figure by tens of ns from run to run. So it is timed apart, and both are reported.
//
// families: collective (ncclAllReduce), group (ncclGroupStart + ncclAllReduce + ncclGroupEnd,
// per group), p2p (ncclSend), sync (cudaStreamSynchronize), driver_sync (cuStreamSynchronize
// as a static CUDA runtime calls it: through the pointer cuGetProcAddress_v2 gave, itself found
// with dlsym in libcuda.so.1; only when libcuda.so.1 is found), graph_launch (cudaGraphLaunch of
// a graph holding one captured ncclAllReduce: a replay record and its completion event),
// graph_launch_plain (cudaGraphLaunch of a graph without NCCL ops: one lookup), and the floor:
// nothing (an empty lambda: what the timing itself costs, cold after the pause too), plt_empty
// (an empty call into a shared object), clock_read (one clock_gettime(CLOCK_MONOTONIC)),
// stamp_read (one clock::StampNowNs, the hooks' clock, calibrated here as the preload's tracker
// does: refreshed in every pause) and cuda_record (one cuEventRecord on the sim driver, the call
// the hook adds per op; only when libcuda.so.1 is found). Per hooked family also, once per batch:
//
//   calls <family> <CUDA calls per call>
//
// counted by the sim (sim/cudart/call_count.h) on this thread: the hook's own calls, as the
// sim's no-op NCCL makes none. Last, what one stamp resolves:
//
//   stamp_resolution_ns <tsc|monotonic> <ns>
// Families run in turn, batch by batch, so slow phases of a shared machine hit them alike.
// scripts/bench runs it alternately with and without the preload and pairs the batches.
//
// usage: bench_hook_overhead [BATCHES [FAMILIES]]   (default 40, every family)
// FAMILIES (comma-separated) keeps only those: on a real GPU, one rank's unmatched ncclSend (p2p)
// would never complete and hang its stream (scripts/gpu-check leaves it out).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/hooks/empty_call.h"
#include "core/clock/stamp_clock.h"

namespace {

// The sim runtime's count of CUDA calls made by the calling thread (sim/cudart/call_count.h);
// null with the real runtime (scripts/bench --gpu), which counts nothing: no "calls" lines then.
using CallCounter = uint64_t (*)();
CallCounter FindCallCounter() {
  return reinterpret_cast<CallCounter>(dlsym(RTLD_DEFAULT, "ncclsim_rt_calls_by_this_thread"));
}

// Fewer calls per batch than the preload's event pool holds (512), with an untimed pause
// between batches in which its tracker drains completed events: the steady state of a
// training step rather than an endless burst. The three families that record an event put
// 384 in the pool per round of 9 batches (90 ms), in which the tracker polls (every 50 ms, or
// 10 ms once a quarter of the pool is pending) once or more: the pool never fills, so every op
// is tracked as in a job. (With 256 calls and 3 ms, the pool was full by the P2P batch, whose
// ops went untracked.)
constexpr int kCallsPerBatch = 128;
constexpr auto kPauseBetweenBatches = std::chrono::milliseconds(10);

struct Family {
  std::string name;
  std::function<void()> call;
  bool hooked = false;
};

struct BatchTimes {
  double first_ns = 0;         // the first call, after the pause
  double rest_ns_per_call = 0;  // the other kCallsPerBatch - 1 calls
};

BatchTimes TimeBatch(const std::function<void()>& call) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  call();
  const auto first_done = Clock::now();
  for (int i = 1; i < kCallsPerBatch; ++i) call();
  const auto stop = Clock::now();
  return {std::chrono::duration<double, std::nano>(first_done - start).count(),
          std::chrono::duration<double, std::nano>(stop - first_done).count() / (kCallsPerBatch - 1)};
}

struct Sim {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* buffer = nullptr;
  cudaGraphExec_t nccl_graph = nullptr;   // one captured ncclAllReduce
  cudaGraphExec_t plain_graph = nullptr;  // one captured memset: no NCCL op
  // As many events as the preload's pool, recorded in turn like the pool's: the sim finds an
  // event in a registry whose size sets the cost of the call, so both runs hold as many.
  std::vector<cudaEvent_t> events;
  mutable size_t next_event = 0;
  CUresult (*event_record)(CUevent, CUstream) = nullptr;  // the sim driver's, when found
  CUresult (*driver_sync)(CUstream) = nullptr;            // cuStreamSynchronize from cuGetProcAddress_v2
};

// The driver the preload would use: the sim's libcuda.so.1 when LD_LIBRARY_PATH has it.
void FindDriver(Sim* sim) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return;
  sim->event_record = reinterpret_cast<CUresult (*)(CUevent, CUstream)>(dlsym(driver, "cuEventRecord"));
  using GetProcAddress = CUresult(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto* get_proc_address = reinterpret_cast<GetProcAddress*>(dlsym(driver, "cuGetProcAddress_v2"));
  void* fn = nullptr;
  if (get_proc_address != nullptr &&
      get_proc_address("cuStreamSynchronize", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr) == CUDA_SUCCESS) {
    sim->driver_sync = reinterpret_cast<CUresult (*)(CUstream)>(fn);
  }
}

bool CreateEvents(Sim* sim) {
  sim->events.resize(512);
  for (cudaEvent_t& e : sim->events) {
    if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) return false;
  }
  return true;
}

// Captures `work` on the bench's stream and instantiates it. ThreadLocal mode: the preload's
// tracker thread polls events meanwhile.
template <typename Work>
bool Capture(Sim* sim, Work work, cudaGraphExec_t* exec) {
  cudaGraph_t graph = nullptr;
  if (cudaStreamBeginCapture(sim->stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return false;
  work();
  if (cudaStreamEndCapture(sim->stream, &graph) != cudaSuccess) return false;
  const bool ok = cudaGraphInstantiate(exec, graph, 0) == cudaSuccess;
  cudaGraphDestroy(graph);  // as torch does: the executable graph keeps what it needs
  return ok;
}

bool CaptureGraphs(Sim* sim) {
  return Capture(sim, [&] { ncclAllReduce(sim->buffer, sim->buffer, 256, ncclFloat, ncclSum, sim->comm, sim->stream); },
                 &sim->nccl_graph) &&
         Capture(sim, [&] { cudaMemsetAsync(sim->buffer, 0, 1024, sim->stream); }, &sim->plain_graph);
}

bool SetUp(Sim* sim) {
  ncclUniqueId id;
  return ncclGetUniqueId(&id) == ncclSuccess && ncclCommInitRank(&sim->comm, 1, id, 0) == ncclSuccess &&
         cudaStreamCreate(&sim->stream) == cudaSuccess &&
         cudaMalloc(reinterpret_cast<void**>(&sim->buffer), 1024) == cudaSuccess && CreateEvents(sim) &&
         CaptureGraphs(sim);
}

std::vector<Family> Families(const Sim& sim) {
  std::vector<Family> families = {
      {"collective", [&] { ncclAllReduce(sim.buffer, sim.buffer, 256, ncclFloat, ncclSum, sim.comm, sim.stream); },
       true},
      {"group",
       [&] {
         ncclGroupStart();
         ncclAllReduce(sim.buffer, sim.buffer, 256, ncclFloat, ncclSum, sim.comm, sim.stream);
         ncclGroupEnd();
       },
       true},
      {"p2p", [&] { ncclSend(sim.buffer, 256, ncclFloat, 0, sim.comm, sim.stream); }, true},
      {"sync", [&] { cudaStreamSynchronize(sim.stream); }, true},
      {"graph_launch", [&] { cudaGraphLaunch(sim.nccl_graph, sim.stream); }, true},
      {"graph_launch_plain", [&] { cudaGraphLaunch(sim.plain_graph, sim.stream); }, true},
      {"nothing", [] {}},
      {"plt_empty", [] { ncclwatch_bench_empty_call(); }},
      {"clock_read",
       [] {
         timespec ts;
         clock_gettime(CLOCK_MONOTONIC, &ts);
         asm volatile("" : : "r"(&ts) : "memory");
       }},
      // The hooks' clock (core/clock/stamp_clock.h).
      {"stamp_read",
       [] {
         const uint64_t stamp = ncclwatch::clock::StampNowNs();
         asm volatile("" : : "r"(stamp) : "memory");
       }},
  };
  if (sim.driver_sync != nullptr) {
    families.push_back({"driver_sync", [&] { sim.driver_sync(reinterpret_cast<CUstream>(sim.stream)); }, true});
  }
  if (sim.event_record != nullptr) {
    families.push_back({"cuda_record", [&] {
                          const cudaEvent_t e = sim.events[sim.next_event++ % sim.events.size()];
                          sim.event_record(reinterpret_cast<CUevent>(e), reinterpret_cast<CUstream>(sim.stream));
                        }});
  }
  return families;
}

}  // namespace

// A thread that never runs. A training process always has several (torch starts its watchdog,
// its heartbeat monitor, the CUDA caching allocator's...), and so does a process with the
// preload (its tracker and watchdog): without one, the run without the preload is the only
// single-threaded one, in which libstdc++ skips the atomic reference counts of shared_ptr and
// glibc's locks are uncontended by construction, and the sim's own work in cudaGraphLaunch
// (shared_ptrs and mutexes) measured 243 ns per launch single-threaded against 476 ns with one
// idle thread: 230 ns that the paired difference counted as ours.
void StartIdleThread() {
  std::thread([] {
    for (;;) pause();
  }).detach();
}

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 40;
  if (std::getenv("NCCLSIM_NOOP") == nullptr) {
    std::fprintf(stderr, "bench_hook_overhead: set NCCLSIM_NOOP=1 (the sim must not run the ops)\n");
    return 2;
  }
  StartIdleThread();
  Sim sim;
  FindDriver(&sim);
  if (batches < 1 || !SetUp(&sim)) {
    std::fprintf(stderr, "bench_hook_overhead: setup failed\n");
    return 1;
  }
  std::vector<Family> families = Families(sim);
  if (argc > 2) {
    const std::string wanted = std::string(",") + argv[2] + ",";
    std::erase_if(families, [&](const Family& f) { return wanted.find("," + f.name + ",") == std::string::npos; });
  }
  ncclwatch::clock::StartStampClock();
  const CallCounter count_calls = FindCallCounter();
  // Warm up: resolve symbols, fault pages, and let the stamp clock's first line come (10 ms).
  for (const Family& f : families) TimeBatch(f.call);
  std::this_thread::sleep_for(kPauseBetweenBatches);
  ncclwatch::clock::RefreshStampClock();
  for (int b = 0; b < batches; ++b) {
    for (const Family& f : families) {
      const uint64_t calls_before = count_calls != nullptr ? count_calls() : 0;
      const BatchTimes times = TimeBatch(f.call);
      std::printf("first %s %.2f\nsample %s %.2f\n", f.name.c_str(), times.first_ns, f.name.c_str(),
                  times.rest_ns_per_call);
      if (f.hooked && count_calls != nullptr) {
        const double calls = static_cast<double>(count_calls() - calls_before) / kCallsPerBatch;
        std::printf("calls %s %.3f\n", f.name.c_str(), calls);
      }
      std::this_thread::sleep_for(kPauseBetweenBatches);
      ncclwatch::clock::RefreshStampClock();
    }
  }
  // What the stamps resolve: a TSC tick, or CLOCK_MONOTONIC's nanosecond where it is not trusted.
  const ncclwatch::clock::StampClockState stamp = ncclwatch::clock::CurrentStampClock();
  if (stamp.source == ncclwatch::clock::StampSource::kTsc) {
    std::printf("stamp_resolution_ns tsc %.3f\n", 1.0 / stamp.tsc_ghz);
  } else {
    timespec resolution{};
    clock_getres(CLOCK_MONOTONIC, &resolution);
    std::printf("stamp_resolution_ns monotonic %.3f\n", resolution.tv_sec * 1e9 + resolution.tv_nsec);
  }
  ncclCommDestroy(sim.comm);
  return 0;
}
