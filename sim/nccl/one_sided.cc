// Stream-side execution of ncclPutSignal, ncclSignal and ncclWaitSignal. A signal is a counter
// in the receiver's SignalBoard; the sender bumps it after its data is in place and rings the
// receiver's doorbell, and WaitSignal sleeps on that doorbell (futex) until enough arrived.
#include <cstdio>
#include <string>

#include "last_error.h"
#include "ops.h"
#include "reduction.h"
#include "window.h"

namespace ncclsim {
namespace {

std::atomic<uint64_t>& Counter(Comm* c, int from, int to, int context, int sig_index) {
  return c->segment->signals(from, to)->count[context][sig_index];
}

void SendSignal(const Op& op) {
  const OneSidedArgs& a = *op.one_sided;
  Counter(op.comm, op.comm->rank, op.root, a.context, a.sig_index).fetch_add(1, std::memory_order_release);
  Ring(op.comm, op.root);
}

// A failed write cannot be reported by the call that enqueued it: it becomes the async error.
bool Put(const Op& op) {
  const OneSidedArgs& a = *op.one_sided;
  std::string error;
  const size_t bytes = op.count * DataTypeSize(op.datatype);
  if (!WriteToPeerWindow(op.comm, a.window_slot, op.root, a.offset, op.send, bytes, &error)) {
    std::fprintf(stderr, "ncclPutSignal: %s\n", error.c_str());
    SetLastError("ncclPutSignal: " + error);
    op.comm->async_error.store(ncclSystemError);
    return false;
  }
  return true;
}

bool Wait(const Op& op) {
  Comm* c = op.comm;
  if (c->signals_consumed.empty())
    c->signals_consumed.assign(static_cast<size_t>(c->nranks) * kSignalContexts * kSignalIndices, 0);
  for (const v232::ncclWaitSignalDesc_t& d : op.one_sided->waits) {
    uint64_t& consumed = c->signals_consumed[(static_cast<size_t>(d.peer) * kSignalContexts + d.ctx) *
                                             kSignalIndices + d.sigIdx];
    const uint64_t target = consumed + static_cast<uint64_t>(d.opCnt);
    auto& counter = Counter(c, d.peer, c->rank, d.ctx, d.sigIdx);
    if (!WaitFor(c, [&] { return counter.load(std::memory_order_acquire) >= target; })) return false;
    consumed = target;
  }
  return true;
}

}  // namespace

bool ExecuteOneSided(const Op& op) {
  switch (op.kind) {
    case CollKind::kPutSignal:
      if (!Put(op)) return false;
      SendSignal(op);
      return true;
    case CollKind::kSignal:
      SendSignal(op);
      return true;
    case CollKind::kWaitSignal:
      return Wait(op);
    default:
      return false;
  }
}

}  // namespace ncclsim
