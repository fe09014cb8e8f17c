// What each kind of hooked NCCL call does around the real call, as small value types with
// one shape, so that the guard (nccl_hook.h: Observe) is written once:
//
//   bool Begin();                 false: forward only (inert, pass-through, nested call)
//   void End(ncclResult_t);       after the real call, only when Begin returned true
//   ncclComm_t Comm() const;      the communicator the call is about (routing), or nullptr
//   NewComms Created() const;     handles the call may have written (init kinds)
//
// They hold pointers to the hook's parameters and live only for one call.
#ifndef NCCLWATCH_PRELOAD_HOOKS_NCCL_TRACKING_H_
#define NCCLWATCH_PRELOAD_HOOKS_NCCL_TRACKING_H_

#include <nccl.h>

#include "preload/hooks/group_depth.h"
#include "preload/hooks/nccl_abi_232.h"
#include "preload/observe/nccl_observer.h"

namespace ncclwatch::preload::tracking {

using shm::Op;
using ::ncclwatch::preload::GroupEndKind;
using ::ncclwatch::preload::Teardown;

inline constexpr int kNoRoot = -1;

struct NewComms {
  const ncclComm_t* comms = nullptr;
  int count = 0;
};

struct NoNewComms {
  NewComms Created() const { return {}; }
};

// Collectives, P2P and one-sided ops: one ring record.
class OpTracking : public NoNewComms {
 public:
  OpTracking(Op op, size_t count, ncclDataType_t type, int redop, int root_or_peer, ncclComm_t comm,
             cudaStream_t stream)
      : comm_(comm) {
    call_.op = {op, static_cast<uint8_t>(type), static_cast<uint8_t>(redop), count, root_or_peer,
                reinterpret_cast<uint64_t>(stream)};
  }
  ncclComm_t Comm() const { return comm_; }
  bool Begin() { return BeginOp(comm_, &call_); }
  void End(ncclResult_t result) { EndOp(&call_, result); }

 private:
  ncclComm_t comm_;
  OpCall call_;
};

// The group ends count depth in TLS and create no communicator: errno is kept only inside the
// calls that settle a group (SettleGroupRange, EndOutermostGroup), not around every end
// (nccl_hook.h, kTrackingKeepsErrno).
class GroupStartTracking : public NoNewComms {
 public:
  static constexpr bool kKeepsErrno = true;
  ncclComm_t Comm() const { return nullptr; }
  bool Begin() { return EnterGroupStart(); }
  void End(ncclResult_t result) { LeaveGroupStart(result); }
};

class GroupEndTracking : public NoNewComms {
 public:
  static constexpr bool kKeepsErrno = true;
  explicit GroupEndTracking(GroupEndKind kind) : kind_(kind) {}
  ncclComm_t Comm() const { return nullptr; }
  bool Begin() { return EnterGroupEnd(&outermost_); }
  void End(ncclResult_t result) { LeaveGroupEnd(kind_, outermost_, result); }

 private:
  GroupEndKind kind_;
  bool outermost_ = false;
};

// Every communicator creation: `Start` is the observer's Begin* for that kind.
class InitTrackingBase {
 public:
  InitTrackingBase(ncclComm_t parent, ncclComm_t* out, int count) : parent_(parent), out_(out), count_(count) {}
  ncclComm_t Comm() const { return parent_; }
  void End(ncclResult_t result) { EndInit(&call_, result, out_, count_); }
  NewComms Created() const { return {out_, out_ != nullptr ? count_ : 0}; }

 protected:
  InitCall call_;

 private:
  ncclComm_t parent_;
  ncclComm_t* out_;
  int count_;
};

// A communicator made from a unique id (InitRank*, and CommGrow, whose existing ranks also
// pass the communicator it grows: `parent`, for routing to its library).
class RootInitTracking : public InitTrackingBase {
 public:
  RootInitTracking(const ncclUniqueId* id, int nranks, int rank, const ncclConfig_t* config, ncclComm_t* out,
                   ncclComm_t parent = nullptr)
      : InitTrackingBase(parent, out, 1), id_(id), nranks_(nranks), rank_(rank), config_(config) {}
  bool Begin() { return BeginRootInit(id_, nranks_, rank_, config_, &call_); }

 private:
  const ncclUniqueId* id_;
  int nranks_, rank_;
  const ncclConfig_t* config_;
};

class InitAllTracking : public InitTrackingBase {
 public:
  InitAllTracking(ncclComm_t* comms, int ndev) : InitTrackingBase(nullptr, comms, ndev) {}
  bool Begin() { return BeginInitAll(&call_); }
};

class SplitTracking : public InitTrackingBase {
 public:
  SplitTracking(ncclComm_t parent, int color, const ncclConfig_t* config, ncclComm_t* out)
      : InitTrackingBase(parent, out, 1), color_(color), config_(config) {}
  bool Begin() { return BeginSplit(Comm(), color_, config_, &call_); }

 private:
  int color_;
  const ncclConfig_t* config_;
};

class ShrinkTracking : public InitTrackingBase {
 public:
  ShrinkTracking(ncclComm_t parent, const ncclConfig_t* config, ncclComm_t* out)
      : InitTrackingBase(parent, out, 1), config_(config) {}
  bool Begin() { return BeginShrink(Comm(), config_, &call_); }

 private:
  const ncclConfig_t* config_;
};

// A call on one communicator whose effect is published once it returned; NCCL's nested calls
// are ignored meanwhile. A subclass's End calls Leave() first.
class AfterCallTracking : public NoNewComms {
 public:
  explicit AfterCallTracking(ncclComm_t comm) : comm_(comm) {}
  ncclComm_t Comm() const { return comm_; }
  bool Begin() { return EnterObserved(&thread_); }

 protected:
  void Leave() { LeaveObserved(thread_); }

 private:
  ncclComm_t comm_;
  ThreadState* thread_ = nullptr;
};

// Finalize, destroy, abort, revoke, suspend, resume: the communicator's state.
class LifecycleTracking : public AfterCallTracking {
 public:
  LifecycleTracking(ncclComm_t comm, Teardown kind) : AfterCallTracking(comm), kind_(kind) {}
  bool Begin() {
    if (!AfterCallTracking::Begin()) return false;
    ObserveTeardownStart(Comm(), kind_);
    return true;
  }
  void End(ncclResult_t result) {
    Leave();
    ObserveTeardown(Comm(), kind_, result);
  }

 private:
  Teardown kind_;
};

class AsyncErrorTracking : public AfterCallTracking {
 public:
  AsyncErrorTracking(ncclComm_t comm, ncclResult_t* async_error) : AfterCallTracking(comm), async_error_(async_error) {}
  void End(ncclResult_t result) {
    Leave();
    ObserveAsyncError(Comm(), result, async_error_);
  }

 private:
  ncclResult_t* async_error_;
};

// ncclGetUniqueId: the id is copied when an ncclCommInitAll is asking for it.
class UniqueIdTracking : public NoNewComms {
 public:
  explicit UniqueIdTracking(const ncclUniqueId* id) : id_(id) {}
  ncclComm_t Comm() const { return nullptr; }
  bool Begin() { return true; }
  void End(ncclResult_t result) { ObserveUniqueId(id_, result); }

 private:
  const ncclUniqueId* id_;
};

// Forwarded untouched (routed to the communicator's library when there is one).
class PassThrough : public NoNewComms {
 public:
  explicit PassThrough(ncclComm_t comm = nullptr) : comm_(comm) {}
  ncclComm_t Comm() const { return comm_; }
  bool Begin() { return false; }
  void End(ncclResult_t) {}

 private:
  ncclComm_t comm_;
};

// ncclCommGrow: a new communicator; existing ranks pass `parent`, only the root the id.
inline RootInitTracking GrowTracking(ncclComm_t parent, const ncclUniqueId* id, int nranks, int rank,
                                     const ncclConfig_t* config, ncclComm_t* out) {
  return RootInitTracking(id, nranks, rank, config, out, parent);
}

// ncclWaitSignal's record: the peer when it waits on one peer (else -1), and the total
// number of signals awaited as its count.
inline int PeerAwaited(int count, const ncclWaitSignalDesc_t* descs) {
  return (count == 1 && descs != nullptr) ? descs[0].peer : -1;
}
inline size_t SignalsAwaited(int count, const ncclWaitSignalDesc_t* descs) {
  size_t total = 0;
  for (int i = 0; descs != nullptr && i < count; ++i) total += descs[i].opCnt > 0 ? descs[i].opCnt : 0;
  return total;
}

inline const ncclUniqueId* FirstId(int count, const ncclUniqueId* ids) {
  return (count > 0 && ids != nullptr) ? &ids[0] : nullptr;
}

}  // namespace ncclwatch::preload::tracking

#endif  // NCCLWATCH_PRELOAD_HOOKS_NCCL_TRACKING_H_
