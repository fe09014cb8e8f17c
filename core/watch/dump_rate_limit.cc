#include "core/watch/dump_rate_limit.h"

namespace ncclwatch::watch {

void DumpRateLimiter::Refill(uint64_t now_ns) {
  if (!started_) {
    started_ = true;
    last_refill_ns_ = now_ns;
    return;
  }
  if (now_ns <= last_refill_ns_ || refill_ns_ == 0) return;
  const uint64_t earned = (now_ns - last_refill_ns_) / refill_ns_;
  if (earned == 0) return;
  last_refill_ns_ += earned * refill_ns_;
  tokens_ = earned >= burst_ - tokens_ ? burst_ : tokens_ + static_cast<uint32_t>(earned);
}

bool DumpRateLimiter::Available(uint64_t now_ns) {
  Refill(now_ns);
  return tokens_ > 0;
}

bool DumpRateLimiter::TryTake(uint64_t now_ns) {
  if (!Available(now_ns)) return false;
  --tokens_;
  return true;
}

}  // namespace ncclwatch::watch
