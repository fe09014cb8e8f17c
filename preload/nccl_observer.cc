#include "preload/nccl_observer.h"

#include <cstring>
#include <string>

#include "core/comm_id/comm_hash.h"
#include "core/shm/process_info.h"
#include "preload/comm_registry.h"
#include "preload/log.h"
#include "preload/nccl_abi_232.h"
#include "preload/nccl_real.h"
#include "preload/resolver.h"
#include "preload/runtime.h"
#include "preload/thread_state.h"

namespace ncclwatch::preload {
namespace {

using shm::CommState;

uint64_t Handle(ncclComm_t comm) { return reinterpret_cast<uint64_t>(comm); }

// The calling thread, unless ncclwatch is off or this is a call made from inside NCCL.
ThreadState* ObservingThread(Runtime* rt) {
  if (ThisThreadDepths().reentry > 0) return nullptr;
  return ThisThread(rt->generation);
}

// One integer the communicator reports about itself, asked of the library that created it.
void QueryInt(const char* name, ncclComm_t comm, int* field) {
  using IntQuery = ncclResult_t(const ncclComm_t, int*);
  auto* fn = reinterpret_cast<IntQuery*>(RealNcclHelper(name, comm));
  int value = -1;
  if (fn != nullptr && fn(comm, &value) == ncclSuccess) *field = value;
}

// commHash from ncclCommQueryProperties (NCCL 2.29+), for a communicator whose id this
// process never saw (e.g. a rank of ncclCommGrow that passed no id).
void QueryHash(ncclComm_t comm, shm::CommIdentity* id) {
  using QueryProperties = ncclResult_t(ncclComm_t, nccl_abi::CommPropertiesPrefix*);
  auto* fn = reinterpret_cast<QueryProperties*>(RealNcclHelper("ncclCommQueryProperties", comm));
  nccl_abi::CommPropertiesPrefix props{};
  props.size = sizeof props;
  props.magic = nccl_abi::kApiMagic;
  props.version = nccl_abi::kFirstVersionWithGrow;
  if (fn == nullptr || fn(comm, &props) != ncclSuccess || props.commHash == 0) return;
  id->comm_hash = props.commHash;
  id->flags |= shm::kCommHashKnown;
}

// Rank, size and device as the communicator reports them; fields it cannot give (e.g.
// while a grouped or nonblocking init is still running) keep their previous value.
void QueryIdentity(ncclComm_t comm, shm::CommIdentity* id) {
  QueryInt("ncclCommUserRank", comm, &id->rank);
  QueryInt("ncclCommCount", comm, &id->nranks);
  QueryInt("ncclCommCuDevice", comm, &id->device);
  if ((id->flags & shm::kCommHashKnown) == 0) QueryHash(comm, id);
}

// cudaGetDevice without disturbing the caller's last CUDA error; -1 when unknown.
int CurrentDevice(Runtime* rt) {
  if (!rt->cuda_resolved || rt->cuda.PeekAtLastError() != cudaSuccess) return -1;
  int device = -1;
  if (rt->cuda.GetDevice(&device) != cudaSuccess) {
    rt->cuda.GetLastError();
    return -1;
  }
  return device;
}

shm::CommIdentity IdentityOf(const CommEntry& entry) {
  const shm::CommSlotHeader& h = *entry.slot.header();
  shm::CommIdentity id;
  id.comm_hash = h.comm_hash.load(std::memory_order_relaxed);
  id.parent_hash = h.parent_hash.load(std::memory_order_relaxed);
  id.rank = h.rank.load(std::memory_order_relaxed);
  id.nranks = h.nranks.load(std::memory_order_relaxed);
  id.device = h.device.load(std::memory_order_relaxed);
  id.flags = h.flags.load(std::memory_order_relaxed);
  return id;
}

// A new entry with a claimed slot, or nullptr when all slots are in use.
CommEntry* NewEntry(Runtime* rt, uint64_t start_ns) {
  shm::CommSlot slot = rt->segment->ClaimCommSlot();
  if (!slot.valid()) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      Log(LogLevel::kWarn, "more than " + std::to_string(shm::kMaxComms) +
                               " live communicators in this process; the extra ones are not watched");
    }
    return nullptr;
  }
  auto* entry = new CommEntry();
  entry->slot = slot;
  slot.BeginInit(0, start_ns);
  return entry;
}

void Publish(CommEntry* entry, const shm::CommIdentity& id) {
  entry->comm_hash = id.comm_hash;
  entry->hash_known = (id.flags & shm::kCommHashKnown) != 0;
  entry->device.store(id.device, std::memory_order_relaxed);
  entry->slot.PublishIdentity(id);
}

void Register(Runtime* rt, CommEntry* entry, ncclComm_t comm) {
  entry->handle = Handle(comm);
  entry->slot.SetHandle(entry->handle);
  rt->comms.Insert(entry->handle, entry);
}

// The communicator finished initialising: publish what it says about itself.
void CompleteInit(Runtime* rt, CommEntry* entry, ncclComm_t comm, bool adopt_rank) {
  shm::CommIdentity id = IdentityOf(*entry);
  QueryIdentity(comm, &id);
  Publish(entry, id);
  entry->slot.FinishInit(true, ncclSuccess, shm::MonotonicNowNs());
  StartTrackerOnce(rt, id.device);
  if (adopt_rank && id.rank >= 0) rt->segment->AdoptRankFromCommunicator(id.rank);
}

void AddFlagsToRange(CommEntry* comm, const RecordRange& range, uint32_t flags) {
  if (flags == 0) return;
  for (uint64_t index = range.first_ring_index; index <= range.last_ring_index; ++index) {
    comm->slot.AddFlags({index, 0, false}, flags);
  }
}

void TrackSpan(Runtime* rt, const GroupSpan& span) {
  uint32_t flags = shm::kRecordUntracked;
  if (rt->tracker) {
    const CompletionTarget target{span.comm->slot, span.range};
    flags = rt->tracker->RecordCompletion(span.comm->device.load(std::memory_order_relaxed), span.stream, &target, 1);
  }
  AddFlagsToRange(span.comm, span.range, flags);
}

// What follows NCCL's answer for records that were published before the call.
void Settle(Runtime* rt, const GroupSpan& span, ncclResult_t result) {
  if (result == ncclSuccess) {
    TrackSpan(rt, span);
  } else if (result == ncclInProgress) {
    AddFlagsToRange(span.comm, span.range, shm::kRecordInProgress);
    std::lock_guard<std::mutex> lock(span.comm->deferred_mu);
    span.comm->deferred.push_back({span.stream, span.range});
  } else {
    AddFlagsToRange(span.comm, span.range, shm::kRecordFailed);
  }
}

void FlushDeferred(Runtime* rt, CommEntry* entry) {
  std::lock_guard<std::mutex> lock(entry->deferred_mu);
  for (const DeferredCompletion& d : entry->deferred) {
    TrackSpan(rt, {entry, d.stream, d.range});
  }
  entry->deferred.clear();
}

void AddToSpans(std::vector<GroupSpan>* spans, CommEntry* comm, uint64_t stream, const shm::RecordRef& ref) {
  for (GroupSpan& span : *spans) {
    if (span.comm == comm && span.stream == stream) {
      span.range.Extend(ref);
      return;
    }
  }
  spans->push_back({comm, stream, RecordRange::Of(ref)});
}

// A nonblocking init completes when ncclCommGetAsyncError says so.
void MarkInitPending(CommEntry* entry) {
  shm::CommIdentity id = IdentityOf(*entry);
  id.flags |= shm::kCommNonblocking;
  Publish(entry, id);
  entry->nonblocking = true;
  entry->init_pending.store(true);
}

bool IsRootComm(const CommEntry& entry) {
  return (entry.slot.header()->flags.load(std::memory_order_relaxed) &
          (shm::kCommFromSplit | shm::kCommFromShrink)) == 0;
}

void SettleGroupedInit(Runtime* rt, CommEntry* entry, ncclResult_t result) {
  if (result == ncclSuccess) {
    CompleteInit(rt, entry, reinterpret_cast<ncclComm_t>(entry->handle), IsRootComm(*entry));
  } else if (result == ncclInProgress) {
    MarkInitPending(entry);
  } else {
    entry->slot.FinishInit(false, result, shm::MonotonicNowNs());
  }
}

}  // namespace

// ---------------------------------------------------------------- collectives, P2P

bool BeginOp(ncclComm_t comm, const shm::OpFingerprint& op, OpCall* call) noexcept {
  if (PassThroughOnly()) return false;
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr) return false;
  try {
    ThreadState* ts = ObservingThread(rt);
    if (ts == nullptr) return false;
    call->runtime = rt;
    call->thread = ts;
    call->op = op;
    call->comm = rt->comms.Find(Handle(comm));
    call->enqueue_ns = shm::MonotonicNowNs();
    if (call->comm != nullptr && ThisThreadDepths().group == 0) {
      call->record = call->comm->slot.Append(op, 0, call->enqueue_ns);
      call->published = true;
    }
    ++ThisThreadDepths().reentry;
    return true;
  } catch (...) {
    DisableAfterInternalError("BeginOp");
    return false;
  }
}

void EndOp(OpCall* call, ncclResult_t result) noexcept {
  ThreadState* ts = call->thread;
  --ThisThreadDepths().reentry;
  if (call->comm == nullptr) return;
  try {
    if (!call->published) {  // inside a group: NCCL enqueues at the outermost GroupEnd
      if (result == ncclSuccess || result == ncclInProgress) {
        ts->grouped_ops.push_back({call->comm, call->op, call->enqueue_ns});
      }
      return;
    }
    Settle(call->runtime, {call->comm, call->op.stream, RecordRange::Of(call->record)}, result);
  } catch (...) {
    DisableAfterInternalError("EndOp");
  }
}

// ---------------------------------------------------------------- groups

bool BeginGroupStart(GroupCall* call) noexcept {
  if (PassThroughOnly()) return false;
  HookDepths& depths = ThisThreadDepths();
  if (depths.reentry > 0) return false;
  ++depths.reentry;
  call->runtime = ActiveRuntime();
  return true;
}

void EndGroupStart(GroupCall*, ncclResult_t result) noexcept {
  HookDepths& depths = ThisThreadDepths();
  --depths.reentry;
  if (result == ncclSuccess) ++depths.group;
}

bool BeginGroupEnd(GroupEndKind kind, GroupCall* call) noexcept {
  if (!BeginGroupStart(call)) return false;
  call->outermost = ThisThreadDepths().group == 1;
  if (!call->outermost || call->runtime == nullptr) return true;
  try {
    ThreadState* ts = ThisThread(call->runtime->generation);
    ts->group_spans.clear();
    if (kind == GroupEndKind::kLaunch) {
      // Published before the launch, so that a rank stuck inside GroupEnd shows its ops.
      for (const GroupedOp& g : ts->grouped_ops) {
        const shm::RecordRef ref = g.comm->slot.Append(g.op, shm::kRecordInGroup, g.enqueue_ns);
        AddToSpans(&ts->group_spans, g.comm, g.op.stream, ref);
      }
    }
    // GroupSimulateEnd launches nothing: its ops are dropped, no seq is consumed.
    ts->grouped_ops.clear();
  } catch (...) {
    DisableAfterInternalError("BeginGroupEnd");
  }
  return true;
}

void EndGroupEnd(GroupCall* call, ncclResult_t result) noexcept {
  HookDepths& depths = ThisThreadDepths();
  --depths.reentry;
  // NCCL leaves the group level even when the end fails.
  if (depths.group > 0) --depths.group;
  if (!call->outermost) return;
  // A communicator created inside the group may have activated ncclwatch meanwhile.
  Runtime* rt = call->runtime != nullptr ? call->runtime : ActiveRuntime();
  if (rt == nullptr || PassThroughOnly()) return;
  try {
    ThreadState* ts = ThisThread(rt->generation);
    for (const GroupSpan& span : ts->group_spans) Settle(rt, span, result);
    ts->group_spans.clear();
    for (CommEntry* entry : ts->grouped_inits) SettleGroupedInit(rt, entry, result);
    ts->grouped_inits.clear();
  } catch (...) {
    DisableAfterInternalError("EndGroupEnd");
  }
}

// ---------------------------------------------------------------- init

namespace {

bool BeginAnyInit(Runtime* rt, InitKind kind, InitCall* call) {
  ThreadState* ts = ObservingThread(rt);
  if (ts == nullptr) return false;
  call->runtime = rt;
  call->thread = ts;
  call->kind = kind;
  call->start_ns = shm::MonotonicNowNs();
  ++ThisThreadDepths().reentry;
  return true;
}

bool BeginChildInit(ncclComm_t parent, InitKind kind, int color, const ncclConfig_t* config,
                    InitCall* call) noexcept {
  if (PassThroughOnly()) return false;
  Runtime* rt = ActivateForNewCommunicator();
  if (rt == nullptr) return false;
  try {
    if (!BeginAnyInit(rt, kind, call)) return false;
    call->parent = rt->comms.Find(Handle(parent));
    call->color = color;
    if (kind == InitKind::kSplit && color == NCCL_SPLIT_NOCOLOR) return true;  // no child here
    call->entry = NewEntry(rt, call->start_ns);
    if (call->entry == nullptr) return true;
    shm::CommIdentity id;
    id.flags = kind == InitKind::kSplit ? shm::kCommFromSplit : shm::kCommFromShrink;
    if (config != nullptr && config->blocking == 0) id.flags |= shm::kCommNonblocking;
    id.device = CurrentDevice(rt);
    if (call->parent != nullptr && call->parent->hash_known) {
      id.parent_hash = call->parent->comm_hash;
      call->predicted_split_count = call->parent->split_count.load() + 1;
      id.comm_hash = kind == InitKind::kSplit
                         ? SplitCommHash(id.parent_hash, call->predicted_split_count, color)
                         : ShrinkCommHash(id.parent_hash);
      id.flags |= shm::kCommHashKnown;
    }
    Publish(call->entry, id);
    return true;
  } catch (...) {
    DisableAfterInternalError("BeginChildInit");
    return false;
  }
}

}  // namespace

bool BeginRootInit(const ncclUniqueId* unique_id, int nranks, int rank, const ncclConfig_t* config,
                   InitCall* call) noexcept {
  if (PassThroughOnly()) return false;
  Runtime* rt = ActivateForNewCommunicator();
  if (rt == nullptr) return false;
  try {
    if (!BeginAnyInit(rt, InitKind::kRoot, call)) return false;
    call->entry = NewEntry(rt, call->start_ns);
    if (call->entry == nullptr) return true;
    shm::CommIdentity id;
    id.rank = rank;
    id.nranks = nranks;
    id.device = CurrentDevice(rt);
    if (config != nullptr && config->blocking == 0) id.flags |= shm::kCommNonblocking;
    if (unique_id != nullptr) {
      id.comm_hash = RootCommHash(unique_id->internal, NCCL_UNIQUE_ID_BYTES);
      id.flags |= shm::kCommHashKnown;
    }
    Publish(call->entry, id);
    return true;
  } catch (...) {
    DisableAfterInternalError("BeginRootInit");
    return false;
  }
}

bool BeginInitAll(InitCall* call) noexcept {
  if (PassThroughOnly()) return false;
  Runtime* rt = ActivateForNewCommunicator();
  if (rt == nullptr) return false;
  try {
    if (!BeginAnyInit(rt, InitKind::kAll, call)) return false;
    call->thread->capture_unique_id = true;
    call->thread->unique_id_captured = false;
    return true;
  } catch (...) {
    DisableAfterInternalError("BeginInitAll");
    return false;
  }
}

bool BeginSplit(ncclComm_t parent, int color, const ncclConfig_t* config, InitCall* call) noexcept {
  return BeginChildInit(parent, InitKind::kSplit, color, config, call);
}

bool BeginShrink(ncclComm_t parent, const ncclConfig_t* config, InitCall* call) noexcept {
  return BeginChildInit(parent, InitKind::kShrink, 0, config, call);
}

void ObserveUniqueId(const ncclUniqueId* id, ncclResult_t result) noexcept {
  if (result != ncclSuccess || id == nullptr || PassThroughOnly()) return;
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr) return;
  try {
    ThreadState* ts = ThisThread(rt->generation);
    if (!ts->capture_unique_id) return;
    static_assert(sizeof(ts->unique_id) == NCCL_UNIQUE_ID_BYTES);
    std::memcpy(ts->unique_id, id->internal, NCCL_UNIQUE_ID_BYTES);
    ts->unique_id_captured = true;
  } catch (...) {
    DisableAfterInternalError("ObserveUniqueId");
  }
}

namespace {

void EndInitAll(InitCall* call, ncclResult_t result, const ncclComm_t* comms, int count) {
  ThreadState* ts = call->thread;
  ts->capture_unique_id = false;
  if (result != ncclSuccess || comms == nullptr) return;
  for (int i = 0; i < count; ++i) {
    if (comms[i] == nullptr) continue;  // claim no slot (and allocate no entry) for it
    CommEntry* entry = NewEntry(call->runtime, call->start_ns);
    if (entry == nullptr) continue;
    shm::CommIdentity id;
    if (ts->unique_id_captured) {
      id.comm_hash = RootCommHash(ts->unique_id, NCCL_UNIQUE_ID_BYTES);
      id.flags |= shm::kCommHashKnown;
    }
    Publish(entry, id);
    Register(call->runtime, entry, comms[i]);
    CompleteInit(call->runtime, entry, comms[i], /*adopt_rank=*/false);
  }
}

void EndSingleInit(InitCall* call, ncclResult_t result, ncclComm_t comm) {
  CommEntry* entry = call->entry;
  if (call->kind == InitKind::kSplit && call->parent != nullptr &&
      (result == ncclSuccess || result == ncclInProgress)) {
    call->parent->split_count.fetch_add(1);
  }
  if (entry == nullptr) return;
  if (comm == nullptr || (result != ncclSuccess && result != ncclInProgress)) {
    entry->slot.FinishInit(false, result, shm::MonotonicNowNs());
    // Never registered, so nothing else holds it (registered entries are kept forever:
    // see comm_registry.h); the slot itself is reusable once kInitFailed.
    delete entry;
    call->entry = nullptr;
    return;
  }
  Register(call->runtime, entry, comm);
  if (ThisThreadDepths().group > 0) {  // NCCL initialises it at the outermost GroupEnd
    call->thread->grouped_inits.push_back(entry);
    return;
  }
  if (result == ncclInProgress) {
    MarkInitPending(entry);
    return;
  }
  CompleteInit(call->runtime, entry, comm, /*adopt_rank=*/call->kind == InitKind::kRoot);
}

}  // namespace

void EndInit(InitCall* call, ncclResult_t result, const ncclComm_t* comms, int count) noexcept {
  --ThisThreadDepths().reentry;
  try {
    if (call->kind == InitKind::kAll) {
      EndInitAll(call, result, comms, count);
    } else {
      EndSingleInit(call, result, (comms != nullptr && count > 0) ? comms[0] : nullptr);
    }
  } catch (...) {
    DisableAfterInternalError("EndInit");
  }
}

// ---------------------------------------------------------------- teardown, errors

bool EnterObserved(ThreadState** thread) noexcept {
  if (PassThroughOnly()) return false;
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr) return false;
  try {
    ThreadState* ts = ObservingThread(rt);
    if (ts == nullptr) return false;
    ++ThisThreadDepths().reentry;
    *thread = ts;
    return true;
  } catch (...) {
    DisableAfterInternalError("EnterObserved");
    return false;
  }
}

void LeaveObserved(ThreadState*) noexcept { --ThisThreadDepths().reentry; }

void ObserveTeardown(ncclComm_t comm, Teardown kind, ncclResult_t result) noexcept {
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr) return;
  CommEntry* entry = rt->comms.Find(Handle(comm));
  if (entry == nullptr) return;
  const bool accepted = result == ncclSuccess || result == ncclInProgress;
  try {
    switch (kind) {
      case Teardown::kFinalize:
        if (accepted) entry->slot.SetState(CommState::kFinalized);
        break;
      case Teardown::kRevoke:
        if (accepted) entry->slot.SetState(CommState::kRevoked);
        break;
      case Teardown::kSuspend:  // idle by request: the detector must not call it hung
        if (accepted) entry->slot.SetState(CommState::kSuspended);
        break;
      case Teardown::kResume:
        if (accepted) entry->slot.SetState(CommState::kReady);
        break;
      case Teardown::kDestroy:
      case Teardown::kAbort:
        if (!accepted && kind == Teardown::kDestroy) break;
        entry->slot.SetState(kind == Teardown::kDestroy ? CommState::kDestroyed : CommState::kAborted);
        rt->comms.Erase(entry->handle);
        break;
    }
  } catch (...) {
    DisableAfterInternalError("ObserveTeardown");
  }
}

void ObserveAsyncError(ncclComm_t comm, ncclResult_t call_result, const ncclResult_t* async_error) noexcept {
  if (call_result != ncclSuccess || async_error == nullptr) return;
  Runtime* rt = ActiveRuntime();
  if (rt == nullptr) return;
  CommEntry* entry = rt->comms.Find(Handle(comm));
  if (entry == nullptr) return;
  try {
    const ncclResult_t state = *async_error;
    entry->slot.SetAsyncError(state, shm::MonotonicNowNs());
    if (state == ncclInProgress) return;
    if (entry->init_pending.exchange(false)) {
      if (state == ncclSuccess) {
        CompleteInit(rt, entry, comm, IsRootComm(*entry));
      } else {
        entry->slot.FinishInit(false, state, shm::MonotonicNowNs());
      }
    }
    // Only now may CUDA work go on the communicator's streams.
    if (state == ncclSuccess) FlushDeferred(rt, entry);
  } catch (...) {
    DisableAfterInternalError("ObserveAsyncError");
  }
}

}  // namespace ncclwatch::preload
