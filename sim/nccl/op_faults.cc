// NCCLSIM_FAULT at run time. Collectives and Send/Recv share one numbering per communicator:
// Launch gives each a 1-based seq in the order this rank issued them (see README.md).
#include <chrono>
#include <csignal>
#include <string>
#include <unistd.h>

#include "last_error.h"
#include "ops.h"

namespace ncclsim {
namespace {

const Fault* Match(const Op& op, FaultKind kind) {
  const Comm* c = op.comm;
  return FindFault(c->faults, kind, c->index, c->rank, FaultPoint{op.seq, op.replay, op.replay_seq});
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

bool OnHost(const Comm* c, int rank, const std::string& host) {
  return rank >= 0 && rank < static_cast<int>(c->hosts.size()) && c->hosts[rank] == host;
}

// Whether op needs the link between f's two hosts: a collective of a comm with ranks on both
// (every rank of it, wherever it runs: rings and trees cross the link), or a Send/Recv whose two
// ends are on opposite sides.
bool CrossesPartition(const Op& op, const Fault& f) {
  const Comm* c = op.comm;
  if (IsP2p(op.kind)) {
    return (OnHost(c, c->rank, f.host_a) && OnHost(c, op.root, f.host_b)) ||
           (OnHost(c, c->rank, f.host_b) && OnHost(c, op.root, f.host_a));
  }
  bool a = false, b = false;
  for (int r = 0; r < c->nranks; ++r) {
    a = a || OnHost(c, r, f.host_a);
    b = b || OnHost(c, r, f.host_b);
  }
  return a && b;
}

// partition: active from op #seq on (the link stays down).
const Fault* MatchPartition(const Op& op) {
  const Comm* c = op.comm;
  for (const auto& f : c->faults) {
    if (f.kind != FaultKind::kPartition || f.seq > op.seq) continue;  // never replay=: the parser refuses
    if (f.rank >= 0 && f.rank != c->rank) continue;
    if (f.comm_index >= 0 && f.comm_index != c->index) continue;
    if (CrossesPartition(op, f)) return &f;
  }
  return nullptr;
}

// As NCCL's net transports: the op stalls; with ms=M the connection is declared dead after
// M ms (a WARN line and async error ncclRemoteError), and the op still never completes: the
// kernel waits until the comm is aborted.
void HoldAcrossPartition(const Op& op, const Fault& f) {
  Comm* c = op.comm;
  if (f.has_ms) {
    SleepInterruptibly(c, f.ms);
    if (c->aborted.load()) return;
    if (DebugWarnEnabled()) {
      // A rank on a third host loses the link between the two as its ring crosses it.
      const std::string& mine = c->hosts[c->rank];
      const std::string peer = mine == f.host_a   ? "peer on " + f.host_b
                               : mine == f.host_b ? "peer on " + f.host_a
                                                  : "link " + f.host_a + "-" + f.host_b;
      DebugWarn(c->device, "NET/Socket : " + peer + " unreachable: connection timed out (NCCLSIM_FAULT partition " +
                               f.host_a + "+" + f.host_b + ", op #" + std::to_string(op.seq) + ")");
    }
    c->async_error.store(ncclRemoteError);
  }
  WaitFor(c, [] { return false; });  // until abort
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
  if (const Fault* f = MatchPartition(op)) {
    HoldAcrossPartition(op, *f);
    return false;
  }
  if (const Fault* f = Match(op, FaultKind::kSlow)) SleepInterruptibly(c, f->ms);
  return !c->aborted.load();
}

}  // namespace ncclsim
