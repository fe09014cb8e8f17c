// GPU completion tracking: a pool of CUDA events recorded after NCCL work, and the
// tracker thread that polls them and publishes completion times.
//
// With the driver (libcuda.so.1 found, driver_api.h) events are created, recorded and
// polled with cuEvent*, which never read or change the runtime's last error: a job that
// leaves cudaErrorNotReady pending is tracked like any other, and reads the same error after
// our hooks. Without it, the runtime is used and an op is only tracked while the job has no
// pending error (we could neither keep nor restore it). An op that is not tracked is counted
// in its communicator's untracked_ops and is never marked complete.
//
// Application threads call RecordCompletion() right after NCCL enqueued work (lock-free:
// a CAS on a pool slot, plus the CUDA calls). With the driver, no capture in progress
// (capture_watch.h) and a created stream, that is one call: cuEventRecord. The legacy stream
// adds cuCtxGetCurrent; a capture in progress adds cuStreamIsCapturing; the runtime alone
// costs cudaPeekAtLastError + cudaEventRecord (+ cudaStreamIsCapturing during captures).
//
// The thread polls every kBusyPollMs while events are outstanding or were recorded since its
// last poll (every kBurstPollMs while many are), and wakes every kIdlePollMs otherwise; it
// starts busy. A burst of more than
// kEventsPerDevice ops within one idle wait finds the pool full, and the ops beyond it go
// untracked (their completion unknown, never counted complete). Staying busy for 10 s after
// the last event avoided that, but cost the tracker 0.23 % of a core per rank instead of
// 0.14 % in the step-time benchmark (50 ms steps): not taken. The thread binds to the first
// communicator's device before any CUDA call, sets its capture mode to ThreadLocal so its
// queries never invalidate another thread's graph capture, and clears the NotReady error
// its polling leaves on its own thread.
#ifndef NCCLWATCH_PRELOAD_TRACKER_TRACKER_H_
#define NCCLWATCH_PRELOAD_TRACKER_TRACKER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "core/shm/comm_slot.h"
#include "core/shm/record_flags.h"
#include "preload/observe/record_range.h"
#include "preload/real/cuda_api.h"
#include "preload/real/driver_api.h"

namespace ncclwatch::preload {

// Records [first, last] of one communicator, done when the event completes. `slot` is the
// CommEntry's (entries are never freed, their slot view never changes). `generation` is the
// slot's generation when recorded: a later communicator in the slot is never marked.
struct CompletionTarget {
  shm::CommSlot* slot = nullptr;
  RecordRange range;
  uint32_t generation = 0;
};

// One communicator's replay record of a CUDA graph launch (shm::CommSlot::AppendReplay): done
// when the launch's event completes. `generation` as in CompletionTarget.
struct ReplayTarget {
  shm::CommSlot* slot = nullptr;
  uint64_t ring_index = 0;
  uint32_t generation = 0;
};

// The replay records of one launch: one per communicator the graph holds ops of, completed
// by one event.
inline constexpr int kReplayTargetsPerEvent = 4;
struct ReplayTargets {
  int count = 0;
  ReplayTarget target[kReplayTargetsPerEvent];
};

class alignas(64) Tracker {
 public:
  static constexpr int kMaxDevices = 64;
  static constexpr uint32_t kEventsPerDevice = 512;
  // CUDA graph launches holding NCCL ops, tracked apart from ops (one event completes the
  // launch's replays on every communicator it touches, ReplayTargets). A training or decode
  // loop launches a few graphs per step: 256 in flight is far beyond it, and the benchmark's
  // 128 launches per batch fit with the tracker's polls between batches.
  static constexpr uint32_t kReplayEventsPerDevice = 256;
  // Completion times are known to within one busy poll. PyTorch's watchdog polls every 100 ms.
  // Each wake costs the thread about 10-30 us of a VM's CPU whatever it finds (the timer, the
  // scheduler, the futex), so the cadence sets the tracker's cost: 0.28 % of a core per rank
  // at 10 ms, 0.11-0.155 % at 25 ms, about 0.06 % at 50 ms (scripts/bench --only step). At
  // 50 ms a completion is still seen within a tenth of the watchdog's 500 ms poll, and
  // timelines stay readable. A poll that leaves more than a quarter of a pool pending (a burst
  // of ops, which could fill the 512 slots before the next poll) comes back after kBurstPollMs.
  static constexpr int kBusyPollMs = 50;
  static constexpr int kBurstPollMs = 10;
  static constexpr int kBurstPending = kEventsPerDevice / 4;
  static constexpr int kIdlePollMs = 100;

  // A claim looks at this many slots at most: a full pool must not cost a full scan.
  static constexpr uint32_t kClaimProbes = 16;
  // A poll scans the pool from the oldest slot still in use to the claim cursor, plus this
  // many (claims racing on one device may leave the cursor a few slots behind the newest), and
  // the whole pool every kFullScanPolls polls (about 1 s busy) and whenever the cursor moved
  // too far to tell: scanning all 512 slots (32 KB) every 25 ms cost the tracker most of its
  // 0.155 % of a core per rank, and evicted the job's caches on its core.
  static constexpr uint32_t kScanSlack = 2 * kClaimProbes;
  static constexpr uint32_t kFullScanPolls = 40;

  // `driver` may be null (runtime events only); both outlive the tracker.
  Tracker(const CudaApi& cuda, const DriverApi* driver)
      : driver_(driver), driver_record_(driver != nullptr ? driver->EventRecord : nullptr), cuda_(cuda) {}
  ~Tracker();
  Tracker(const Tracker&) = delete;
  Tracker& operator=(const Tracker&) = delete;

  // Starts the thread, bound to `device`. Idempotent.
  void Start(int device);
  // Stops the thread, waiting at most ~1 s (it may be stuck in the driver).
  void Stop();

  // Records a completion event on `stream` for `target`, on `device`, leaving the caller's
  // current device and last CUDA error as they were. Returns the shm::kRecord* flags to add
  // to the target's records (0 when tracked). Inline: defined in tracker_record.h.
  inline uint32_t RecordCompletion(int device, uint64_t stream, const CompletionTarget& target);
  // Asks for the line RecordCompletion reads first on `device`'s pool (the claim cursor's), for
  // a hook to call as early as it knows the device: after a pause it arrives meanwhile.
  inline void PrefetchForRecord(int device) const;
  // The same for a CUDA graph launch on `stream`: one event after it completes every target.
  // kRecordCaptured when the launch stream is capturing (the launch is captured, not run).
  uint32_t RecordReplayCompletion(int device, uint64_t stream, const ReplayTargets& targets);

 private:
  enum SlotState : uint32_t { kFree = 0, kClaimed = 1, kPending = 2 };
  // One cache line: a hook claims a new slot per op, so the slot is a line the op touches
  // cold (the tracker freed it on another poll). With four targets (never more than one was
  // used) a slot was 256 bytes, the pool 128 KB, and every poll's scan evicted the job's
  // caches on the tracker's core.
  struct alignas(64) EventSlot {
    std::atomic<uint32_t> state{kFree};
    cudaEvent_t event = nullptr;
    CompletionTarget target;
  };
  static_assert(sizeof(EventSlot) == 64);
  // Two cache lines: the state and the event in the first, with the first targets.
  struct alignas(64) ReplayEventSlot {
    std::atomic<uint32_t> state{kFree};
    cudaEvent_t event = nullptr;
    ReplayTargets targets;
  };
  static_assert(sizeof(ReplayEventSlot) == 128);
  struct DevicePool {
    // Claims so far, counted past the pool's size (a hint, mod 2^32): the next claim looks first
    // at slot cursor % kEventsPerDevice, and the tracker scans from the oldest slot in use up
    // to it (PollPool).
    std::atomic<uint32_t> cursor{0};
    std::atomic<CUcontext> context{nullptr};  // the device's primary context (driver only)
    std::atomic<bool> direct_record{true};    // created streams recorded without a context push
    std::atomic<bool> all_created{false};     // every slot has its event (CreateMissingEvents)
    uint32_t scan_from = 0;  // the tracker's: the oldest claim it has not seen released
    std::atomic<uint32_t> replay_cursor{0};  // the same for the replay slots
    // A graph launch was tracked on this device: from then on the tracker polls and makes the
    // replay slots' events too (a job without graphs pays for neither).
    std::atomic<bool> replays_used{false};
    std::atomic<bool> replays_created{false};  // every replay slot has its event
    EventSlot slots[kEventsPerDevice];
    ReplayEventSlot replay_slots[kReplayEventsPerDevice];
  };

  inline DevicePool* PoolFor(int device);  // inline ones: tracker_record.h
  DevicePool* NewPool(int device);
  inline EventSlot* Claim(DevicePool* pool);
  template <typename Slot, uint32_t kSlots>
  static inline Slot* ClaimFrom(std::atomic<uint32_t>& cursor, Slot (&slots)[kSlots]);
  template <typename Slot>
  static void Release(Slot* slot);
  // Creates a disable-timing event on `device`, restoring the current device / context.
  bool CreateEvent(int device, DevicePool* pool, cudaEvent_t* event);
  bool CreateRuntimeEvent(int device, cudaEvent_t* event);
  bool CreateDriverEvent(int device, DevicePool* pool, cudaEvent_t* event);
  CUcontext DriverContext(int device, DevicePool* pool);
  // The flags of a record whose event cannot be recorded on `stream` (the tracker is off, an
  // error is pending without the driver, or the stream captures); 0 when it can be.
  inline uint32_t NotRecordable(uint64_t stream);
  // kRecordCaptured when `stream` is capturing, 0 when not, kRecordUntracked when unknown.
  uint32_t CaptureFlags(cudaStream_t stream);
  uint32_t DriverCaptureFlags(cudaStream_t stream);
  inline bool Record(DevicePool* pool, cudaEvent_t event, uint64_t stream);
  inline bool DriverRecord(DevicePool* pool, cudaEvent_t event, uint64_t stream);
  bool PushedRecord(DevicePool* pool, cudaEvent_t event, uint64_t stream);
  bool DirectRecordRefused(DevicePool* pool, cudaEvent_t event, uint64_t stream);
  cudaError_t Query(cudaEvent_t event);
  void Bind(int device, DevicePool* pool, int* bound_device);
  static void Finish(EventSlot* slot, bool completed, uint64_t now_ns);
  static void FinishReplays(ReplayEventSlot* slot, bool completed, uint64_t now_ns);
  // Queries `slot`, pending: when its event is done (or unusable), finishes and releases it.
  // True while it is still not ready.
  template <typename Slot, typename FinishFn>
  bool PollSlot(int device, DevicePool* pool, Slot* slot, int* bound_device, FinishFn finish, uint64_t now_ns);
  // Queries every pending slot of `slots`; returns how many are still not ready.
  template <typename Slot, uint32_t kSlots, typename FinishFn>
  int PollSlots(int device, DevicePool* pool, Slot (&slots)[kSlots], int* bound_device, FinishFn finish,
                uint64_t now_ns);
  template <typename Slot, uint32_t kSlots>
  bool CreateMissingEventsIn(int device, DevicePool* pool, Slot (&slots)[kSlots]);
  void DisableEvents(cudaError_t error);
  void Run(int device);
  // Returns how many events are still not ready; `now_ns` is the completion time published.
  int PollOnce(int* bound_device, uint64_t now_ns);
  int PollPool(int device, DevicePool* pool, bool full, int* bound_device, uint64_t now_ns);
  void CreateMissingEvents();

  // What every op reads, together in the object's first line (the class is 64-byte aligned):
  // after a pause each distinct line an op touches is a cache miss of its own, about 100 ns
  // on the developers' VM. The pools of devices 0-3 share it; the others take the next line.
  const DriverApi* const driver_;
  CUresult (*const driver_record_)(CUevent, CUstream);  // driver_->EventRecord, null without the driver
  const CudaApi& cuda_;
  std::atomic<bool> events_disabled_{false};
  std::atomic<bool> started_{false};
  std::atomic<DevicePool*> pools_[kMaxDevices] = {};
  // Raised by every op, taken down by each poll: a line of its own, so that the tracker's
  // writes never take the line above from the hooks' caches.
  alignas(64) std::atomic<bool> recorded_since_poll_{false};
  uint32_t polls_since_full_scan_ = 0;  // the tracker thread's

  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;     // guarded by mu_
  bool stopped_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_TRACKER_TRACKER_H_
