// Communicator creation: InitRank(Config/Scalable), InitAll, Split, Shrink, Grow. The slot
// is claimed and the identity published before the call (an init that never returns is
// visible); rank, size and device are asked of the communicator once it is initialised.
#include <atomic>
#include <cstring>
#include <string>

#include "core/comm_id/comm_hash.h"
#include "core/shm/hook_clock.h"
#include "preload/call_sites/call_sites.h"
#include "preload/observe/config_comm_name.h"
#include "preload/lifecycle/log.h"
#include "preload/hooks/nccl_abi_232.h"
#include "preload/observe/nccl_observer.h"
#include "preload/observe/nccl_observer_internal.h"
#include "preload/real/nccl_real.h"

namespace ncclwatch::preload {
namespace {

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
  id.name = shm::LoadCommName(h);
  return id;
}

// A new entry with a claimed slot, or nullptr when all slots are in use or /dev/shm cannot
// back another one (one warning for either; the communicator itself is created as usual).
CommEntry* NewEntry(Runtime* rt, uint64_t start_ns) {
  Result<shm::CommSlot> slot = rt->segment->ClaimCommSlot();
  if (!slot.ok()) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      // No errno: every slot is in use; else /dev/shm could not back another one.
      Log(LogLevel::kWarn, slot.error().error_number() == 0
                               ? "more than " + std::to_string(shm::kMaxComms) +
                                     " live communicators in this process; the extra ones are not watched"
                               : slot.error().message() + "; this communicator and later ones that find no room are "
                                                          "not watched (the job carries on)");
    }
    return nullptr;
  }
  auto* entry = new CommEntry();
  entry->slot = *slot;
  entry->call_sites = call_sites::NewTable(entry);
  slot->BeginInit(0, start_ns);
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

// A nonblocking init completes when ncclCommGetAsyncError says so.
void MarkInitPending(CommEntry* entry) {
  shm::CommIdentity id = IdentityOf(*entry);
  id.flags |= shm::kCommNonblocking;
  Publish(entry, id);
  entry->nonblocking = true;
  entry->init_pending.store(true);
}

void StartCall(Runtime* rt, ThreadState* ts, InitKind kind, InitCall* call) {
  call->runtime = rt;
  call->thread = ts;
  call->kind = kind;
  call->start_ns = shm::HookClockNowNs();
}

uint32_t NonblockingFlag(const ncclConfig_t* config) {
  return config != nullptr && config->blocking == 0 ? shm::kCommNonblocking : 0;
}

bool BeginChildInit(ncclComm_t parent, InitKind kind, int color, const ncclConfig_t* config,
                    InitCall* call) noexcept {
  return BeginObserved(Activation::kActivate, "BeginChildInit", [&](Runtime* rt, ThreadState* ts) {
    StartCall(rt, ts, kind, call);
    call->parent = rt->comms.Find(Handle(parent));
    call->color = color;
    if (kind == InitKind::kSplit && color == NCCL_SPLIT_NOCOLOR) return;  // no child here
    call->entry = NewEntry(rt, call->start_ns);
    if (call->entry == nullptr) return;
    shm::CommIdentity id;
    id.flags = (kind == InitKind::kSplit ? shm::kCommFromSplit : shm::kCommFromShrink) | NonblockingFlag(config);
    id.device = CurrentDevice(rt);
    id.name = CommNameOfConfig(config);  // a child without a name of its own has none
    if (call->parent != nullptr && call->parent->hash_known) {
      id.parent_hash = call->parent->comm_hash;
      call->predicted_split_count = call->parent->split_count.load() + 1;
      id.comm_hash = kind == InitKind::kSplit
                         ? SplitCommHash(id.parent_hash, call->predicted_split_count, color)
                         : ShrinkCommHash(id.parent_hash);
      id.flags |= shm::kCommHashKnown;
    }
    Publish(call->entry, id);
  });
}

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
    entry->slot.FinishInit(false, result, shm::HookClockNowNs());
    // Never registered, so nothing else holds it (registered entries are kept forever:
    // see comm_registry.h); the slot itself is reusable once kInitFailed.
    delete entry;
    call->entry = nullptr;
    return;
  }
  Register(call->runtime, entry, comm);
  if (ThisThreadDepths().group > 0) {  // NCCL initialises it at the outermost GroupEnd
    call->thread->grouped_inits.push_back(entry);
    ThisThreadDepths().group_work = GroupWork::kMore;
    return;
  }
  if (result == ncclInProgress) {
    MarkInitPending(entry);
    return;
  }
  CompleteInit(call->runtime, entry, comm, /*adopt_rank=*/call->kind == InitKind::kRoot);
}

}  // namespace

void CompleteInit(Runtime* rt, CommEntry* entry, ncclComm_t comm, bool adopt_rank) {
  shm::CommIdentity id = IdentityOf(*entry);
  QueryIdentity(comm, &id);
  Publish(entry, id);
  entry->slot.FinishInit(true, ncclSuccess, shm::HookClockNowNs());
  NoteCommunicatorReady();  // the watchdog's start-up work waits for this (watchdog.h)
  StartTrackerOnce(rt, id.device);
  if (adopt_rank && id.rank >= 0) rt->segment->AdoptRankFromCommunicator(id.rank);
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
    entry->slot.FinishInit(false, result, shm::HookClockNowNs());
  }
}

bool BeginRootInit(const ncclUniqueId* unique_id, int nranks, int rank, const ncclConfig_t* config,
                   InitCall* call) noexcept {
  return BeginObserved(Activation::kActivate, "BeginRootInit", [&](Runtime* rt, ThreadState* ts) {
    StartCall(rt, ts, InitKind::kRoot, call);
    call->entry = NewEntry(rt, call->start_ns);
    if (call->entry == nullptr) return;
    shm::CommIdentity id;
    id.rank = rank;
    id.nranks = nranks;
    id.device = CurrentDevice(rt);
    id.flags |= NonblockingFlag(config);
    id.name = CommNameOfConfig(config);
    if (unique_id != nullptr) {
      id.comm_hash = RootCommHash(unique_id->internal, NCCL_UNIQUE_ID_BYTES);
      id.flags |= shm::kCommHashKnown;
    }
    Publish(call->entry, id);
  });
}

bool BeginInitAll(InitCall* call) noexcept {
  return BeginObserved(Activation::kActivate, "BeginInitAll", [&](Runtime* rt, ThreadState* ts) {
    StartCall(rt, ts, InitKind::kAll, call);
    ts->capture_unique_id = true;
    ts->unique_id_captured = false;
  });
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
  Guarded("ObserveUniqueId", [&] {
    ThreadState* ts = ThisThread(rt->generation);
    if (!ts->capture_unique_id) return;
    static_assert(sizeof(ts->unique_id) == NCCL_UNIQUE_ID_BYTES);
    std::memcpy(ts->unique_id, id->internal, NCCL_UNIQUE_ID_BYTES);
    ts->unique_id_captured = true;
  });
}

void EndInit(InitCall* call, ncclResult_t result, const ncclComm_t* comms, int count) noexcept {
  --ThisThreadDepths().reentry;
  Guarded("EndInit", [&] {
    if (call->kind == InitKind::kAll) {
      EndInitAll(call, result, comms, count);
    } else {
      EndSingleInit(call, result, (comms != nullptr && count > 0) ? comms[0] : nullptr);
    }
  });
}

}  // namespace ncclwatch::preload
