#include "comm.h"

#include <unordered_map>

#include "futex.h"

namespace ncclsim {
namespace {

std::mutex live_mu;
// Never destroyed: communicators may be destroyed during exit.
std::unordered_map<const Comm*, int>& LiveComms() {
  static auto* live = new std::unordered_map<const Comm*, int>();
  return *live;
}

}  // namespace

void MarkCommLive(const Comm* c, int index) {
  std::lock_guard<std::mutex> lock(live_mu);
  LiveComms()[c] = index;
}

bool CommIsLive(const Comm* c, int index) {
  std::lock_guard<std::mutex> lock(live_mu);
  auto it = LiveComms().find(c);
  return it != LiveComms().end() && it->second == index;
}

void Ring(Comm* c, int rank) {
  auto* bell = &c->segment->slot(rank)->doorbell;
  bell->fetch_add(1, std::memory_order_acq_rel);
  FutexWakeAll(bell);
}

void RingAll(Comm* c) {
  for (int r = 0; r < c->nranks; ++r) Ring(c, r);
}

bool WaitFor(Comm* c, const std::function<bool()>& pred, int timeout_ms) {
  auto* bell = &c->segment->slot(c->rank)->doorbell;
  for (;;) {
    const uint32_t v = bell->load(std::memory_order_acquire);
    if (c->aborted.load()) return false;
    if (pred()) return true;
    FutexWait(bell, v, timeout_ms);
    if (timeout_ms >= 0) return pred() && !c->aborted.load();
  }
}

bool BootAllGather(Comm* c, const int32_t mine[2], std::vector<std::array<int32_t, 2>>* all) {
  ShmSegment* s = c->segment.get();
  RankSlot* me = s->slot(c->rank);
  me->boot_data[0] = mine[0];
  me->boot_data[1] = mine[1];
  const uint64_t published = ++c->boot_phase;
  me->boot_phase.store(published, std::memory_order_release);
  RingAll(c);
  auto everyone_at = [&](uint64_t p) {
    for (int r = 0; r < c->nranks; ++r)
      if (s->slot(r)->boot_phase.load(std::memory_order_acquire) < p) return false;
    return true;
  };
  if (!WaitFor(c, [&] { return everyone_at(published); })) return false;
  all->resize(c->nranks);
  for (int r = 0; r < c->nranks; ++r) (*all)[r] = {s->slot(r)->boot_data[0], s->slot(r)->boot_data[1]};
  // Second step: nobody overwrites boot_data before everyone has read it.
  const uint64_t read_done = ++c->boot_phase;
  me->boot_phase.store(read_done, std::memory_order_release);
  RingAll(c);
  return WaitFor(c, [&] { return everyone_at(read_done); });
}

}  // namespace ncclsim

ncclComm::ncclComm() = default;

ncclComm::~ncclComm() {
  std::lock_guard<std::mutex> lock(ncclsim::live_mu);
  ncclsim::LiveComms().erase(this);
}
