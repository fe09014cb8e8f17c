#include "preload/lifecycle/runtime.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/settings/settings.h"
#include "preload/call_sites/call_sites.h"
#include "core/shm/process_info.h"
#include "core/shm/run_identity.h"
#include "core/shm/segment_file.h"
#include "core/shm/segment_gc.h"
#include "preload/observe/capture_watch.h"
#include "preload/lifecycle/exit_evidence.h"
#include "preload/hooks/keep_errno.h"
#include "preload/lifecycle/log.h"
#include "preload/real/resolver.h"

namespace ncclwatch::preload {
namespace runtime_detail {
std::atomic<int> mode{static_cast<int>(Mode::kUnknown)};
std::atomic<Runtime*> runtime{nullptr};
}  // namespace runtime_detail

namespace {

using runtime_detail::Mode;
std::atomic<int>& g_mode = runtime_detail::mode;
std::atomic<Runtime*>& g_runtime = runtime_detail::runtime;
std::atomic<uint64_t> g_generation{0};
std::mutex g_activation_mu;

Mode LoadMode() { return static_cast<Mode>(g_mode.load(std::memory_order_acquire)); }

// Reads NCCLWATCH_DISABLE once, on the first hook call of the process (the other settings are
// read at activation).
Mode ResolveInitialMode() {
  const bool off = settings::ReadDisable();
  int expected = static_cast<int>(Mode::kUnknown);
  g_mode.compare_exchange_strong(expected, static_cast<int>(off ? Mode::kPassThrough : Mode::kInert));
  return LoadMode();
}

void ForgetParentInChild() {
  // The parent's runtime (and its tracker thread, which did not survive the fork) stay
  // untouched in memory; the child simply stops using them.
  g_runtime.store(nullptr, std::memory_order_release);
  g_generation.fetch_add(1, std::memory_order_relaxed);
  if (LoadMode() == Mode::kActive) g_mode.store(static_cast<int>(Mode::kInert), std::memory_order_release);
}

// on_exit rather than atexit: the handler receives the exit status (also for a return from
// main). The segment stays as exit evidence for the peers this rank may leave waiting; the
// last live process of the job on this host removes the job's segments.
void RecordExitAtExit(int status, void*) {
  Runtime* rt = g_runtime.load(std::memory_order_acquire);
  if (rt == nullptr || rt->owner_pid != getpid()) return;
  const KeepErrno keep;
  try {
    if (rt->watchdog) rt->watchdog->Stop();
    if (rt->tracker) rt->tracker->Stop();  // its last completions are published before the mark
    rt->segment->RecordExit(shm::ExitHow::kStatus, status);
    const shm::SegmentHeader& h = rt->segment->header();
    // A failed run that its launcher restarts keeps its segments for the next attempt
    // (segment_gc.h), which removes both at its own end.
    shm::RemoveRunIfEnded(std::string(h.job_id, strnlen(h.job_id, sizeof h.job_id)), h.run_key, getuid(),
                          rt->launcher_may_restart);
  } catch (...) {  // an on_exit handler, called from C (exit): nothing may change how the job exits
  }
}

std::unique_ptr<Runtime> CreateRuntime(const settings::Settings& config) {
  auto rt = std::make_unique<Runtime>();
  rt->generation = g_generation.fetch_add(1, std::memory_order_relaxed) + 1;
  rt->owner_pid = getpid();
  rt->launcher_may_restart = config.launcher_rank.MayRestart();
  shm::SegmentOptions options;
  options.uid = getuid();
  options.job_id = config.job_id;
  options.pid = rt->owner_pid;
  options.process_start_ticks = shm::ProcessStartTicks(rt->owner_pid);
  options.boot_id = shm::BootId();
  options.run_key = shm::ThisProcessRunKey();
  options.host = shm::HostName();
  options.rank = config.launcher_rank;
  options.ring_capacity = config.ring_capacity;
  options.stall_threshold_ns = config.stall_threshold_ns;
  Result<std::unique_ptr<shm::SegmentWriter>> created = shm::SegmentWriter::Create(options);
  if (!created.ok()) {
    Log(LogLevel::kWarn,
        "cannot publish progress: " + created.error().message() + "; ncclwatch is disabled for this process");
    return nullptr;
  }
  rt->segment = std::move(created).value();
  rt->cuda_resolved = rt->cuda.Resolve();
  call_sites::Configure(config.call_sites, config.ring_capacity);
  // Captures are counted from our hooks only if the job's runtime is a dynamic one they precede.
  DecideCaptureTrust(ResolveNext(Library::kCudart, "cudaStreamBeginCapture", nullptr) != nullptr,
                     config.capture_query_always);
  if (rt->cuda_resolved) {
    rt->driver_resolved = rt->driver.Resolve();
    rt->tracker = std::make_unique<Tracker>(rt->cuda, rt->driver_resolved ? &rt->driver : nullptr);
    if (!rt->driver_resolved) {
      Log(LogLevel::kInfo, "libcuda.so.1 not usable; ops issued while the job has a CUDA error pending are untracked");
    }
  } else {
    Log(LogLevel::kInfo, "CUDA runtime not found; GPU completion times will not be published");
  }
  Log(LogLevel::kInfo, "publishing to /dev/shm" + rt->segment->name());
  ArmExitEvidence(&rt->segment->header(), rt->owner_pid);
  WatchdogSettings watchdog_settings = WatchdogSettingsOf(config, options.host);
  watchdog_settings.run_key = options.run_key;
  watchdog_settings.process_start_unix_ns = shm::StartTicksToUnixNs(options.process_start_ticks);
  rt->watchdog = std::make_unique<Watchdog>(std::move(watchdog_settings));
  return rt;
}

}  // namespace

bool runtime_detail::ResolvePassThrough() {
  const KeepErrno keep;  // the group ends' hooks keep no errno around this first question
  return ResolveInitialMode() == Mode::kPassThrough;
}

Runtime* ActivateForNewCommunicator() {
  if (PassThroughOnly()) return nullptr;
  if (Runtime* rt = ActiveRuntime()) return rt;
  const KeepErrno keep;  // activation opens files, shared memory and threads
  std::lock_guard<std::mutex> lock(g_activation_mu);
  if (Runtime* rt = ActiveRuntime()) return rt;
  if (PassThroughOnly()) return nullptr;
  // The process's settings, read once here: activation happens once per process.
  settings::Settings config;
  std::vector<std::string> warnings;
  try {
    config = settings::ReadSettings(&warnings);
  } catch (...) {  // out of memory: the defaults (activation runs inside the first hook: C ABI)
  }
  InitLogging(config.log_level);
  for (const std::string& warning : warnings) Log(LogLevel::kWarn, warning);
  // Files other users leave in /dev/shm under our job's names are reported in our log.
  shm::SetSegmentWarningSink([](const std::string& line) { Log(LogLevel::kWarn, line); });
  static std::once_flag process_hooks_once;
  std::call_once(process_hooks_once, [] {
    pthread_atfork(nullptr, nullptr, ForgetParentInChild);
    on_exit(RecordExitAtExit, nullptr);
  });
  std::unique_ptr<Runtime> rt;
  try {
    rt = CreateRuntime(config);
  } catch (...) {  // inside the first hook (C ABI)
    rt.reset();  // e.g. out of memory: same outcome as a failed segment, pass-through
  }
  if (!rt) {
    g_mode.store(static_cast<int>(Mode::kPassThrough), std::memory_order_release);
    return nullptr;
  }
  Runtime* raw = rt.release();  // lives until exit: hooks on other threads may hold it
  g_runtime.store(raw, std::memory_order_release);
  g_mode.store(static_cast<int>(Mode::kActive), std::memory_order_release);
  raw->watchdog->Start();
  return raw;
}

void StartTrackerOnce(Runtime* runtime, int device) {
  if (runtime->tracker && device >= 0) runtime->tracker->Start(device);
}

void DisableAfterInternalError(const char* where) {
  const int previous = g_mode.exchange(static_cast<int>(Mode::kPassThrough));
  if (previous != static_cast<int>(Mode::kPassThrough)) {
    Log(LogLevel::kWarn, std::string("internal error in ") + where + "; ncclwatch is now a pass-through");
  }
}

}  // namespace ncclwatch::preload
