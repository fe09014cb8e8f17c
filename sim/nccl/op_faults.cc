// NCCLSIM_FAULT at run time. Collectives and Send/Recv share one numbering per communicator:
// Launch gives each a 1-based seq in the order this rank issued them (see README.md).
#include <chrono>
#include <csignal>
#include <unistd.h>

#include "ops.h"

namespace ncclsim {
namespace {

const Fault* Match(const Op& op, FaultKind kind) {
  const Comm* c = op.comm;
  return FindFault(c->faults, kind, c->index, c->rank, op.seq);
}

void SleepInterruptibly(Comm* c, int ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!c->aborted.load()) {
    // Rounded up, so the fault never ends early.
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return;
    WaitFor(c, [] { return false; }, static_cast<int>(left));
  }
}

}  // namespace

void MarkFaultError(const Op& op) {
  if (op.seq != 0 && Match(op, FaultKind::kError)) op.comm->async_error.store(ncclRemoteError);
}

bool MismatchCompletes(const Op& op) { return op.seq != 0 && Match(op, FaultKind::kMismatchCompletes) != nullptr; }

bool ApplyFaults(const Op& op) {
  if (op.seq == 0) return true;
  Comm* c = op.comm;
  if (Match(op, FaultKind::kDie)) kill(getpid(), SIGKILL);
  if (Match(op, FaultKind::kHang)) {
    WaitFor(c, [] { return false; });  // until abort
    return false;
  }
  if (const Fault* f = Match(op, FaultKind::kSlow)) SleepInterruptibly(c, f->ms);
  return !c->aborted.load();
}

}  // namespace ncclsim
