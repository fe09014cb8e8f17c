// Process-wide state of the preload and its life cycle.
//
//   pass-through  NCCLWATCH_DISABLE=1, or after an internal error: hooks only forward.
//   inert         until the first communicator is created: no thread, shm, signal
//                 handler or CUDA call.
//   active        from the first init hook on: a segment, a comm registry, the watchdog
//                 thread, and (from the first communicator with a known device) the
//                 tracker thread.
// A forked child returns to inert: it never publishes as its parent, makes no CUDA call,
// and leaves the parent's segment alone; if it creates a communicator itself it becomes
// active under its own pid. At exit the segment records how the process left and stays as
// evidence (exit_evidence.h) until the last live process of the job on the host leaves.
#ifndef NCCLWATCH_PRELOAD_LIFECYCLE_RUNTIME_H_
#define NCCLWATCH_PRELOAD_LIFECYCLE_RUNTIME_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "core/shm/segment_writer.h"
#include "preload/observe/comm_registry.h"
#include "preload/real/cuda_api.h"
#include "preload/tracker/tracker.h"
#include "preload/watchdog/watchdog.h"

namespace ncclwatch::preload {

struct Runtime {
  uint64_t generation = 0;
  pid_t owner_pid = 0;
  bool launcher_may_restart = false;  // torchrun has restarts left (exit: segment_gc.h keep_failed)
  std::unique_ptr<shm::SegmentWriter> segment;
  CudaApi cuda;
  bool cuda_resolved = false;
  DriverApi driver;  // usable when driver_resolved
  bool driver_resolved = false;
  std::unique_ptr<Tracker> tracker;  // null when the CUDA runtime was not found
  std::unique_ptr<Watchdog> watchdog;  // started with the first communicator
  // Last: its 16 KB of buckets would otherwise put the fields above, which every op reads
  // (generation, tracker, the driver's cuEventRecord), on two pages.
  CommRegistry comms;
};

// Read by every hook: inline, so that each is one load rather than a call.
namespace runtime_detail {
enum class Mode : int { kUnknown = 0, kInert = 1, kActive = 2, kPassThrough = 3 };
extern std::atomic<int> mode;
extern std::atomic<Runtime*> runtime;
// Reads NCCLWATCH_DISABLE, on the first hook call of the process; true for pass-through.
bool ResolvePassThrough();
}  // namespace runtime_detail

// True when NCCLWATCH_DISABLE=1 or ncclwatch disabled itself. One atomic load.
inline bool PassThroughOnly() {
  using runtime_detail::Mode;
  const int mode = runtime_detail::mode.load(std::memory_order_acquire);
  if (mode == static_cast<int>(Mode::kUnknown)) [[unlikely]] return runtime_detail::ResolvePassThrough();
  return mode == static_cast<int>(Mode::kPassThrough);
}

// The active runtime, or nullptr while inert / in pass-through. One atomic load.
inline Runtime* ActiveRuntime() { return runtime_detail::runtime.load(std::memory_order_acquire); }

// Called when a communicator is about to be created: activates on first use.
// nullptr when ncclwatch is (or just became) disabled.
Runtime* ActivateForNewCommunicator();

// Starts the tracker bound to `device` (first call wins).
void StartTrackerOnce(Runtime* runtime, int device);

// Switches the process to pass-through for good, with one warning.
void DisableAfterInternalError(const char* where);

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_LIFECYCLE_RUNTIME_H_
