// Whether any stream of the process may be capturing into a CUDA graph, known from the calls
// that begin and end captures (the capture rows of hooks/cuda_api_table.h) instead of asking CUDA on every op.
//
// Why: the completion tracker must not record an event on a capturing stream, nor on the
// legacy stream while another stream captures. Asking (cuStreamIsCapturing) costs one CUDA
// call per op; most jobs never capture, and those that do (CUDA graphs in torch.compile's
// "reduce-overhead" mode, vLLM) capture for moments. While no capture is in progress, the
// tracker records its event and makes no other call.
//
// Captures are tracked by stream, in a fixed table of kMaxCaptures slots (atomics, no lock):
// a capture ended that we never saw begin can never hide one we saw. The count can only
// err upward (a capture ended by a path we do not hook, e.g. a driver that hands out
// unexported functions from cuGetProcAddress), which costs queries, never correctness. A
// dynamic runtime that reaches the driver through our lookups (cuda_hooks.h) begins and ends
// each capture twice, nested (the runtime's call, then the driver's): two slots, both dropped.
//
// A capture that could begin unseen makes the count untrusted, for good, and every op is
// asked about again:
//   - no dynamic CUDA runtime reached through our hooks at activation (the job's runtime
//     is linked statically, as in CuPy and XLA, or absent);
//   - more than kMaxCaptures captures at once;
//   - the tracker finds one of its events was recorded inside a capture
//     (CUDA_ERROR_CAPTURED_EVENT): a capture begun where our hooks could not see it;
//   - NCCLWATCH_CAPTURE_QUERY=always.
// An op recorded during an unseen capture is never counted complete: its event query fails
// and the op is counted untracked.
#ifndef NCCLWATCH_PRELOAD_OBSERVE_CAPTURE_WATCH_H_
#define NCCLWATCH_PRELOAD_OBSERVE_CAPTURE_WATCH_H_

#include <atomic>
#include <cstdint>

namespace ncclwatch::preload {

constexpr int kMaxCaptures = 64;

// The identity of a capturing stream: the handle, with the per-thread default stream told
// apart by thread (`per_thread_default` for the _ptsz entry points, where 0 means it).
uint64_t CaptureKey(const void* stream, bool per_thread_default) noexcept;

// Around a begin call: CaptureBeginning before it (so that concurrent ops already ask),
// CaptureBegun after it with whether it succeeded.
void CaptureBeginning(uint64_t key) noexcept;
void CaptureBegun(uint64_t key, bool succeeded) noexcept;
// After an end call that ended the capture (success, or the capture was invalidated).
void CaptureEnded(uint64_t key) noexcept;

// Decided once, when ncclwatch activates: trusted only if `dynamic_runtime_hooked` and not
// `query_always` (NCCLWATCH_CAPTURE_QUERY=always).
void DecideCaptureTrust(bool dynamic_runtime_hooked, bool query_always) noexcept;
// Asks again on every op, for good; logs `why` once.
void DistrustCaptureCount(const char* why) noexcept;

namespace capture_detail {
extern std::atomic<int> in_progress;  // begun and not ended (plus begins under way)
extern std::atomic<bool> trusted;
}  // namespace capture_detail

// True when the op's stream must be asked whether it captures. Two relaxed loads.
inline bool CaptureQueryNeeded() noexcept {
  return !capture_detail::trusted.load(std::memory_order_relaxed) ||
         capture_detail::in_progress.load(std::memory_order_seq_cst) != 0;
}

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_CAPTURE_WATCH_H_
