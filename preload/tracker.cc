#include "preload/tracker.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <string>

#include "core/shm/process_info.h"
#include "preload/bounded_stop.h"
#include "preload/log.h"

namespace ncclwatch::preload {

Tracker::~Tracker() { Stop(); }

void Tracker::Start(int device) {
  if (started_.exchange(true)) return;
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

Tracker::DevicePool* Tracker::PoolFor(int device) {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  DevicePool* pool = pools_[device].load(std::memory_order_acquire);
  if (pool != nullptr) return pool;
  // Once per device: not on the steady-state path.
  auto* fresh = new DevicePool();
  if (pools_[device].compare_exchange_strong(pool, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;
  return pool;
}

Tracker::EventSlot* Tracker::Claim(DevicePool* pool) {
  if (pool->in_use.load(std::memory_order_relaxed) >= kEventsPerDevice) return nullptr;
  // Slots are claimed in cursor order and mostly freed in the same order, so the slot at
  // the cursor is usually free.
  const uint32_t start = pool->cursor.fetch_add(1, std::memory_order_relaxed);
  for (uint32_t i = 0; i < kClaimProbes; ++i) {
    EventSlot& slot = pool->slots[(start + i) % kEventsPerDevice];
    uint32_t expected = kFree;
    if (slot.state.load(std::memory_order_relaxed) == kFree &&
        slot.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) {
      pool->in_use.fetch_add(1, std::memory_order_relaxed);
      return &slot;
    }
  }
  return nullptr;
}

void Tracker::Release(DevicePool* pool, EventSlot* slot) {
  slot->state.store(kFree, std::memory_order_release);
  pool->in_use.fetch_sub(1, std::memory_order_relaxed);
}

void Tracker::DisableEvents(cudaError_t error) {
  if (!events_disabled_.exchange(true)) {
    Log(LogLevel::kWarn, "cannot create CUDA events (error " + std::to_string(static_cast<int>(error)) +
                             "); GPU completion times will not be published");
  }
}

uint32_t Tracker::RecordCompletion(int device, uint64_t stream, const CompletionTarget* targets, int count) {
  if (events_disabled_.load(std::memory_order_relaxed) || !started_.load(std::memory_order_relaxed)) {
    return shm::kRecordUntracked;
  }
  // The application's pending error must survive; our calls could overwrite or clear it.
  if (cuda_.PeekAtLastError() != cudaSuccess) return shm::kRecordUntracked;
  auto* cuda_stream = reinterpret_cast<cudaStream_t>(stream);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  const cudaError_t capture_error = cuda_.StreamIsCapturing(cuda_stream, &capture);
  if (capture_error != cudaSuccess) {
    cuda_.GetLastError();
    // On the legacy stream, an ongoing capture elsewhere reports itself this way.
    return capture_error == cudaErrorStreamCaptureImplicit ? shm::kRecordCaptured : shm::kRecordUntracked;
  }
  if (capture != cudaStreamCaptureStatusNone) return shm::kRecordCaptured;

  DevicePool* pool = PoolFor(device);
  EventSlot* slot = pool == nullptr ? nullptr : Claim(pool);
  if (slot == nullptr) return shm::kRecordUntracked;
  // Only creation depends on the current device; a record follows its stream's device.
  if (slot->event == nullptr && !CreateEvent(device, &slot->event)) {
    Release(pool, slot);
    return shm::kRecordUntracked;
  }
  if (cuda_.EventRecord(slot->event, cuda_stream) != cudaSuccess) {
    cuda_.GetLastError();
    Release(pool, slot);
    return shm::kRecordUntracked;
  }
  slot->target_count = count < kTargetsPerEvent ? count : kTargetsPerEvent;
  for (int i = 0; i < slot->target_count; ++i) slot->targets[i] = targets[i];
  outstanding_.fetch_add(1, std::memory_order_relaxed);
  slot->state.store(kPending, std::memory_order_release);
  return 0;
}

bool Tracker::CreateEvent(int device, cudaEvent_t* event) {
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

void Tracker::PollOnce(int* bound_device) {
  for (int device = 0; device < kMaxDevices; ++device) {
    DevicePool* pool = pools_[device].load(std::memory_order_acquire);
    if (pool == nullptr) continue;
    for (EventSlot& slot : pool->slots) {
      if (slot.state.load(std::memory_order_acquire) != kPending) continue;
      if (*bound_device != device && cuda_.SetDevice(device) == cudaSuccess) *bound_device = device;
      const cudaError_t status = cuda_.EventQuery(slot.event);
      if (status == cudaErrorNotReady) continue;
      if (status == cudaSuccess) {
        const uint64_t now = shm::MonotonicNowNs();
        for (int i = 0; i < slot.target_count; ++i) {
          const CompletionTarget& t = slot.targets[i];
          shm::CommSlot comm = t.slot;
          comm.MarkRangeCompleted(t.range.first_ring_index, t.range.last_ring_index, t.range.max_collective_seq, now);
        }
      }
      // Any other status: the event is unusable; the records simply never complete.
      outstanding_.fetch_sub(1, std::memory_order_relaxed);
      Release(pool, &slot);
    }
  }
  // Queries leave cudaErrorNotReady as this thread's last error.
  cuda_.GetLastError();
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
  while (!stop_) {
    const bool busy = outstanding_.load(std::memory_order_relaxed) > 0;
    if (busy) {
      lock.unlock();
      PollOnce(&bound_device);
      lock.lock();
    }
    wake_.wait_for(lock, std::chrono::milliseconds(busy ? kBusyPollMs : kIdlePollMs), [this] { return stop_; });
  }
  stopped_ = true;
  wake_.notify_all();
}

}  // namespace ncclwatch::preload
