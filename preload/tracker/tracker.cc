#include "preload/tracker/tracker.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <string>

#include "core/clock/monotonic.h"
#include "core/clock/stamp_clock.h"
#include "core/shm/record_flags.h"
#include "preload/lifecycle/bounded_stop.h"
#include "preload/observe/capture_watch.h"
#include "preload/lifecycle/log.h"
#include "preload/tracker/tracker_record.h"

namespace ncclwatch::preload {

Tracker::~Tracker() { Stop(); }

void Tracker::Start(int device) {
  if (started_.exchange(true)) return;
  // The stamp clock's first pair: the thread below refreshes its calibration at every wake.
  clock::StartStampClock();
  // The device's pool now, so that the thread's first pass creates its events before the
  // job's first ops: a hook that finds no event creates one itself (a context push, the
  // create and a pop besides the record), which the first 512 ops paid before.
  PoolFor(device);
  // The thread must not take the application's signals (e.g. SIGINT meant for Python).
  // Real-time signals stay open: the stack sampler signals every thread with one of them,
  // and a tracker that could not answer would cost every hang dump the full timeout.
  sigset_t all, previous;
  sigfillset(&all);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) sigdelset(&all, sig);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  thread_ = std::thread([this, device] { Run(device); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void Tracker::Stop() { StopWithin(thread_, mu_, wake_, stop_, stopped_, std::chrono::seconds(1)); }

Tracker::DevicePool* Tracker::NewPool(int device) {
  // Once per device: not on the steady-state path.
  DevicePool* pool = nullptr;
  auto* fresh = new DevicePool();
  if (pools_[device].compare_exchange_strong(pool, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;
  return pool;
}

void Tracker::DisableEvents(cudaError_t error) {
  if (!events_disabled_.exchange(true)) {
    Log(LogLevel::kWarn, "cannot create CUDA events (error " + std::to_string(static_cast<int>(error)) +
                             "); GPU completion times will not be published");
  }
}

uint32_t Tracker::CaptureFlags(cudaStream_t stream) {
  // The driver's query never touches the runtime's last error. Without it, RecordCompletion
  // already saw no error pending, so the runtime query's own error can be cleared.
  if (driver_ != nullptr) return DriverCaptureFlags(stream);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  const cudaError_t capture_error = cuda_.StreamIsCapturing(stream, &capture);
  if (capture_error != cudaSuccess) {
    cuda_.GetLastError();  // nothing was pending: this restores exactly the job's state
    // On the legacy stream, an ongoing capture elsewhere reports itself this way.
    return capture_error == cudaErrorStreamCaptureImplicit ? shm::kRecordCaptured : shm::kRecordUntracked;
  }
  return capture != cudaStreamCaptureStatusNone ? shm::kRecordCaptured : 0;
}

uint32_t Tracker::DriverCaptureFlags(cudaStream_t stream) {
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUresult result = driver_->StreamIsCapturing(DriverStream(reinterpret_cast<uint64_t>(stream)), &capture);
  if (result == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) return shm::kRecordCaptured;
  // A driver without capture queries (the sim's) has no capture to report.
  if (result != CUDA_SUCCESS && result != CUDA_ERROR_NOT_SUPPORTED) return shm::kRecordUntracked;
  return capture != CU_STREAM_CAPTURE_STATUS_NONE ? shm::kRecordCaptured : 0;
}

// Not on the op path: a graph launch is rare next to ops, and its steps are RecordCompletion's.
uint32_t Tracker::RecordReplayCompletion(int device, uint64_t stream, const ReplayTargets& targets) {
  if (const uint32_t flags = NotRecordable(stream); flags != 0) return flags;
  DevicePool* pool = PoolFor(device);
  ReplayEventSlot* slot = pool == nullptr ? nullptr : ClaimFrom(pool->replay_cursor, pool->replay_slots);
  if (slot == nullptr) return shm::kRecordUntracked;
  if ((slot->event == nullptr && !CreateEvent(device, pool, &slot->event)) || !Record(pool, slot->event, stream)) {
    Release(slot);
    return shm::kRecordUntracked;
  }
  slot->targets = targets;
  for (int i = 0; i < targets.count; ++i) {
    ReplayTarget& t = slot->targets.target[i];
    t.generation = t.slot->generation();
    t.slot->EventRecorded();
  }
  pool->replays_used.store(true, std::memory_order_relaxed);
  slot->state.store(kPending, std::memory_order_release);
  recorded_since_poll_.store(true, std::memory_order_release);
  return 0;
}

// The direct record failed: recorded with the context pushed, and so from then on if that works.
bool Tracker::DirectRecordRefused(DevicePool* pool, cudaEvent_t event, uint64_t stream) {
  if (!PushedRecord(pool, event, stream)) return false;
  pool->direct_record.store(false, std::memory_order_relaxed);
  Log(LogLevel::kInfo, "the driver refused an event record outside the stream's context; recording with it pushed");
  return true;
}

bool Tracker::PushedRecord(DevicePool* pool, cudaEvent_t event, uint64_t stream) {
  CUcontext wanted = pool->context.load(std::memory_order_acquire);
  CUcontext current = nullptr;
  const bool push = driver_->CtxGetCurrent(&current) == CUDA_SUCCESS && wanted != nullptr && current != wanted &&
                    driver_->CtxPushCurrent(wanted) == CUDA_SUCCESS;
  const CUresult result = driver_->EventRecord(reinterpret_cast<CUevent>(event), DriverStream(stream));
  if (push) driver_->CtxPopCurrent(&current);
  return result == CUDA_SUCCESS;
}

bool Tracker::CreateEvent(int device, DevicePool* pool, cudaEvent_t* event) {
  return driver_ != nullptr ? CreateDriverEvent(device, pool, event) : CreateRuntimeEvent(device, event);
}

CUcontext Tracker::DriverContext(int device, DevicePool* pool) {
  CUcontext context = pool->context.load(std::memory_order_acquire);
  if (context != nullptr) return context;
  CUdevice handle = 0;
  // The communicator's device already has its primary context (NCCL runs there): retaining
  // it creates nothing. Kept retained for the life of the process, like the pool.
  if (driver_->DeviceGet(&handle, device) != CUDA_SUCCESS || driver_->PrimaryCtxRetain(&context, handle) != CUDA_SUCCESS) {
    return nullptr;
  }
  CUcontext expected = nullptr;
  if (!pool->context.compare_exchange_strong(expected, context, std::memory_order_acq_rel)) return expected;
  return context;
}

bool Tracker::CreateDriverEvent(int device, DevicePool* pool, cudaEvent_t* event) {
  CUcontext context = DriverContext(device, pool);
  if (context == nullptr || driver_->CtxPushCurrent(context) != CUDA_SUCCESS) return false;
  CUevent created = nullptr;
  const CUresult result = driver_->EventCreate(&created, CU_EVENT_DISABLE_TIMING);
  CUcontext popped = nullptr;
  driver_->CtxPopCurrent(&popped);
  if (result != CUDA_SUCCESS) {
    DisableEvents(static_cast<cudaError_t>(result));
    return false;
  }
  *event = reinterpret_cast<cudaEvent_t>(created);
  return true;
}

bool Tracker::CreateRuntimeEvent(int device, cudaEvent_t* event) {
  int current = -1;
  if (cuda_.GetDevice(&current) != cudaSuccess) {
    cuda_.GetLastError();
    return false;
  }
  const bool switch_device = device >= 0 && device != current;
  if (switch_device && cuda_.SetDevice(device) != cudaSuccess) {
    cuda_.GetLastError();
    return false;
  }
  const cudaError_t error = cuda_.EventCreateWithFlags(event, cudaEventDisableTiming);
  if (error != cudaSuccess) {
    cuda_.GetLastError();
    *event = nullptr;
    DisableEvents(error);
  }
  if (switch_device) cuda_.SetDevice(current);
  return error == cudaSuccess;
}

cudaError_t Tracker::Query(cudaEvent_t event) {
  if (driver_ == nullptr) return cuda_.EventQuery(event);
  const CUresult result = driver_->EventQuery(reinterpret_cast<CUevent>(event));
  if (result == CUDA_SUCCESS) return cudaSuccess;
  // Recorded inside a capture we were told nothing of: from now on every op is asked.
  if (result == CUDA_ERROR_CAPTURED_EVENT) DistrustCaptureCount("an event was recorded inside an unseen capture");
  return result == CUDA_ERROR_NOT_READY ? cudaErrorNotReady : cudaErrorUnknown;
}

void Tracker::Bind(int device, DevicePool* pool, int* bound_device) {
  if (*bound_device == device) return;
  CUcontext context = driver_ != nullptr ? pool->context.load(std::memory_order_acquire) : nullptr;
  const bool bound = context != nullptr ? driver_->CtxSetCurrent(context) == CUDA_SUCCESS
                                        : cuda_.SetDevice(device) == cudaSuccess;
  if (bound) *bound_device = device;
}

// Marks the target complete (only if its slot still holds the communicator that recorded)
// or counts it untracked, and unpins its slot.
void Tracker::Finish(EventSlot* slot, bool completed, uint64_t now_ns) {
  const CompletionTarget& t = slot->target;
  const RecordRange& r = t.range;
  if (t.slot->generation() == t.generation) {
    if (completed) {
      t.slot->MarkRangeCompleted(r.first_ring_index, r.last_ring_index, r.max_collective_seq, now_ns);
    } else {
      t.slot->CountRangeUntracked(r.first_ring_index, r.last_ring_index);
    }
  }
  t.slot->EventReleased();
}

// The launch's replays complete (or, its event failed, count as untracked) on every
// communicator whose slot still holds the one that recorded.
void Tracker::FinishReplays(ReplayEventSlot* slot, bool completed, uint64_t now_ns) {
  for (int i = 0; i < slot->targets.count; ++i) {
    const ReplayTarget& t = slot->targets.target[i];
    if (t.slot->generation() == t.generation) {
      if (completed) {
        t.slot->MarkReplayCompleted(t.ring_index, now_ns);
      } else {
        t.slot->CountUntracked(1);
      }
    }
    t.slot->EventReleased();
  }
}

// Creates the events of every slot that has none yet, a device at a time, so that the job's
// threads find them made: creating one in the hook costs a context push, the create and a pop
// (three calls more than the record, and microseconds on a GPU) for each of the first 512 ops.
// Returns whether every slot of `slots` has its event; a failed create ends it (the hooks
// create theirs as before).
template <typename Slot, uint32_t kSlots>
bool Tracker::CreateMissingEventsIn(int device, DevicePool* pool, Slot (&slots)[kSlots]) {
  bool all = true;
  for (Slot& slot : slots) {
    if (events_disabled_.load(std::memory_order_relaxed)) return false;
    uint32_t expected = kFree;
    if (slot.state.load(std::memory_order_acquire) != kFree ||
        !slot.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
      all = false;  // in use: it was claimed by a hook, which created its event if missing
      continue;
    }
    const bool created = slot.event != nullptr || CreateEvent(device, pool, &slot.event);
    Release(&slot);
    if (!created) return false;
  }
  return all;
}

void Tracker::CreateMissingEvents() {
  for (int device = 0; device < kMaxDevices; ++device) {
    DevicePool* pool = pools_[device].load(std::memory_order_acquire);
    if (pool == nullptr) continue;
    if (!pool->all_created.load(std::memory_order_relaxed) && CreateMissingEventsIn(device, pool, pool->slots)) {
      pool->all_created.store(true, std::memory_order_relaxed);
    }
    // The replay slots once a graph launch used one (a job without graphs makes none of them).
    if (pool->replays_used.load(std::memory_order_relaxed) && !pool->replays_created.load(std::memory_order_relaxed) &&
        CreateMissingEventsIn(device, pool, pool->replay_slots)) {
      pool->replays_created.store(true, std::memory_order_relaxed);
    }
  }
}

template <typename Slot, typename FinishFn>
bool Tracker::PollSlot(int device, DevicePool* pool, Slot* slot, int* bound_device, FinishFn finish, uint64_t now_ns) {
  Bind(device, pool, bound_device);
  const cudaError_t status = Query(slot->event);
  if (status == cudaErrorNotReady) return true;
  // Any other status: the event is unusable; its records never complete.
  finish(slot, status == cudaSuccess, now_ns);
  Release(slot);
  return false;
}

template <typename Slot, uint32_t kSlots, typename FinishFn>
int Tracker::PollSlots(int device, DevicePool* pool, Slot (&slots)[kSlots], int* bound_device, FinishFn finish,
                       uint64_t now_ns) {
  int still_pending = 0;
  for (Slot& slot : slots) {
    if (slot.state.load(std::memory_order_acquire) != kPending) continue;
    if (PollSlot(device, pool, &slot, bound_device, finish, now_ns)) ++still_pending;
  }
  return still_pending;
}

int Tracker::PollOnce(int* bound_device, uint64_t now_ns) {
  // Lowered before the scan by an exchange, which reads the last raise and so sees the slots
  // that raise published; a record made during the scan raises it again for the next poll.
  recorded_since_poll_.exchange(false, std::memory_order_acq_rel);
  const bool full = ++polls_since_full_scan_ >= kFullScanPolls;
  if (full) polls_since_full_scan_ = 0;
  int still_pending = 0;
  for (int device = 0; device < kMaxDevices; ++device) {
    DevicePool* pool = pools_[device].load(std::memory_order_acquire);
    if (pool == nullptr) continue;
    still_pending += PollPool(device, pool, full, bound_device, now_ns);
    // Replay slots are few and used by graph jobs only: all of them, every poll.
    if (pool->replays_used.load(std::memory_order_acquire)) {
      still_pending += PollSlots(device, pool, pool->replay_slots, bound_device, FinishReplays, now_ns);
    }
  }
  // Runtime queries leave cudaErrorNotReady as this thread's (the tracker's own) last error.
  if (driver_ == nullptr) cuda_.GetLastError();
  return still_pending;
}

// Scans the claims [scan_from, cursor + kScanSlack) in claim order, or the pool's last
// kEventsPerDevice claims (all of it, oldest first): slots are claimed at the cursor, so every
// slot claimed since the last poll, and every one still in use from before, lies in that window
// unless more than a pool's worth of claims came in between, which the cursor's count shows.
int Tracker::PollPool(int device, DevicePool* pool, bool full, int* bound_device, uint64_t now_ns) {
  const uint32_t cursor = pool->cursor.load(std::memory_order_acquire);
  uint32_t begin = pool->scan_from;
  uint32_t count = cursor - begin + kScanSlack;
  if (full || count > kEventsPerDevice) {
    begin = cursor - kEventsPerDevice;
    count = kEventsPerDevice;
  }
  int still_pending = 0;
  bool in_use_seen = false;
  uint32_t oldest_in_use = cursor;
  for (uint32_t i = 0; i < count; ++i) {
    EventSlot& slot = pool->slots[(begin + i) % kEventsPerDevice];
    const uint32_t state = slot.state.load(std::memory_order_acquire);
    if (state == kFree) continue;
    if (state == kPending) {
      if (!PollSlot(device, pool, &slot, bound_device, Finish, now_ns)) continue;
      ++still_pending;
    }
    // Pending, or claimed by a hook that has not recorded yet: the next poll starts here.
    if (!in_use_seen) {
      in_use_seen = true;
      oldest_in_use = begin + i;
    }
  }
  // Never past a slot in use; never ahead of the cursor, where the next claims come.
  if (!in_use_seen || static_cast<int32_t>(oldest_in_use - cursor) > 0) oldest_in_use = cursor;
  pool->scan_from = oldest_in_use;
  return still_pending;
}

void Tracker::Run(int device) {
  pthread_setname_np(pthread_self(), "ncclwatch");
  int bound_device = -1;
  // Bind before any other CUDA call, so no context is created on GPU 0.
  if (device >= 0 && cuda_.SetDevice(device) == cudaSuccess) bound_device = device;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal;
  cuda_.ThreadExchangeStreamCaptureMode(&mode);
  cuda_.GetLastError();
  std::unique_lock<std::mutex> lock(mu_);
  int pending = 0;  // events left not ready by the last poll
  auto busy = [&] { return pending > 0 || recorded_since_poll_.load(std::memory_order_acquire); };
  // Started for a new communicator: its ops come next, so the first wait is a busy one (an
  // idle first wait left the benchmark's first 500 ops without a free slot).
  bool first = true;
  while (!stop_) {
    const bool polling = busy();
    lock.unlock();
    clock::RefreshStampClock();
    if (polling) pending = PollOnce(&bound_device, clock::MonotonicNowNs());
    CreateMissingEvents();
    lock.lock();
    const int wait_ms = pending > kBurstPending ? kBurstPollMs : polling || first ? kBusyPollMs : kIdlePollMs;
    first = false;
    wake_.wait_for(lock, std::chrono::milliseconds(wait_ms), [this] { return stop_; });
  }
  // One last look when stopped (at exit): a rank that synchronised before leaving publishes
  // the completions it waited for, so its exit evidence shows its true last completed #N.
  if (busy()) {
    lock.unlock();
    PollOnce(&bound_device, clock::MonotonicNowNs());
    lock.lock();
  }
  stopped_ = true;
  wake_.notify_all();
}

}  // namespace ncclwatch::preload
