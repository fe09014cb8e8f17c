#include "preload/observe/capture_watch.h"

#include <string>

#include "preload/lifecycle/log.h"

namespace ncclwatch::preload {
namespace capture_detail {
std::atomic<int> in_progress{0};
std::atomic<bool> trusted{false};
}  // namespace capture_detail

namespace {

using capture_detail::in_progress;
using capture_detail::trusted;

std::atomic<uint64_t> capturing[kMaxCaptures] = {};
std::atomic<bool> distrusted{false};

thread_local char this_thread_tag;

bool Claim(uint64_t key) {
  for (std::atomic<uint64_t>& slot : capturing) {
    uint64_t expected = 0;
    if (slot.load(std::memory_order_relaxed) == 0 && slot.compare_exchange_strong(expected, key)) return true;
  }
  return false;
}

bool Drop(uint64_t key) {
  for (std::atomic<uint64_t>& slot : capturing) {
    uint64_t expected = key;
    if (slot.load(std::memory_order_relaxed) == key && slot.compare_exchange_strong(expected, 0)) return true;
  }
  return false;
}

}  // namespace

uint64_t CaptureKey(const void* stream, bool per_thread_default) noexcept {
  const auto handle = reinterpret_cast<uint64_t>(stream);
  // cudaStreamPerThread (0x2), or 0 through a _ptsz entry point: this thread's default stream.
  if (handle == 0x2 || (handle == 0 && per_thread_default)) return reinterpret_cast<uint64_t>(&this_thread_tag) | 1;
  return handle == 0 ? 0x1 : handle;  // 0 is the legacy stream (0x1)
}

void CaptureBeginning(uint64_t) noexcept { in_progress.fetch_add(1, std::memory_order_seq_cst); }

void CaptureBegun(uint64_t key, bool succeeded) noexcept {
  if (succeeded && !Claim(key)) {
    DistrustCaptureCount("more than 64 stream captures at once");
    return;  // keeps its count: never ended below zero
  }
  if (!succeeded) in_progress.fetch_sub(1, std::memory_order_seq_cst);
}

void CaptureEnded(uint64_t key) noexcept {
  if (Drop(key)) in_progress.fetch_sub(1, std::memory_order_seq_cst);
}

void DecideCaptureTrust(bool dynamic_runtime_hooked, bool query_always) noexcept {
  if (query_always) {
    DistrustCaptureCount("NCCLWATCH_CAPTURE_QUERY=always");
  } else if (!dynamic_runtime_hooked) {
    DistrustCaptureCount("no dynamic CUDA runtime behind our hooks (a static one cannot be watched)");
  } else {
    trusted.store(true);
    // A distrust that raced with this decision wins (it raises `distrusted` before lowering).
    if (distrusted.load()) trusted.store(false);
  }
}

void DistrustCaptureCount(const char* why) noexcept {
  const bool already = distrusted.exchange(true);
  trusted.store(false);
  if (already) return;
  try {
    Log(LogLevel::kInfo, std::string("stream captures are checked on every op: ") + why);
  } catch (...) {  // called from an interposed CUDA hook (C ABI): a lost line, never the job
  }
}

}  // namespace ncclwatch::preload
