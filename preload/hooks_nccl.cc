// Hooks for the NCCL API: collectives, point-to-point, groups, communicator life cycle.
// Each is a thin shell: forward to the real function, let nccl_observer.h look at it.
#include <nccl.h>

#include "preload/hook_macros.h"
#include "preload/keep_errno.h"
#include "preload/nccl_observer.h"

namespace {

using ncclwatch::preload::OpCall;
using ncclwatch::shm::Op;
using ncclwatch::shm::OpFingerprint;

constexpr auto kNccl = ncclwatch::preload::Library::kNccl;

// Forwards one collective or P2P call, publishing it around the real call.
template <typename Call>
ncclResult_t ObserveOp(ncclComm_t comm, const OpFingerprint& op, Call&& call) {
  OpCall observed;
  if (!ncclwatch::preload::BeginOp(comm, op, &observed)) return call();
  const ncclResult_t result = call();
  {
    const ncclwatch::preload::KeepErrno keep;
    ncclwatch::preload::EndOp(&observed, result);
  }
  return result;
}

OpFingerprint Fingerprint(Op op, size_t count, ncclDataType_t type, int redop, int root_or_peer, cudaStream_t s) {
  return {op, static_cast<uint8_t>(type), static_cast<uint8_t>(redop), count, root_or_peer,
          reinterpret_cast<uint64_t>(s)};
}

template <typename Call>
ncclResult_t ObserveInit(ncclwatch::preload::InitCall* init, bool observing, ncclComm_t* comms, int count,
                         Call&& call) {
  if (!observing) return call();
  const ncclResult_t result = call();
  {
    const ncclwatch::preload::KeepErrno keep;
    ncclwatch::preload::EndInit(init, result, comms, count);
  }
  return result;
}

template <typename Call>
ncclResult_t ObserveTeardown(ncclComm_t comm, ncclwatch::preload::Teardown kind, Call&& call) {
  ncclwatch::preload::ThreadState* thread = nullptr;
  if (!ncclwatch::preload::EnterObserved(&thread)) return call();
  const ncclResult_t result = call();
  {
    const ncclwatch::preload::KeepErrno keep;
    ncclwatch::preload::LeaveObserved(thread);
    ncclwatch::preload::ObserveTeardown(comm, kind, result);
  }
  return result;
}

template <typename Call>
ncclResult_t ObserveGroupEnd(ncclwatch::preload::GroupEndKind kind, Call&& call) {
  ncclwatch::preload::GroupCall group;
  if (!ncclwatch::preload::BeginGroupEnd(kind, &group)) return call();
  const ncclResult_t result = call();
  {
    const ncclwatch::preload::KeepErrno keep;
    ncclwatch::preload::EndGroupEnd(&group, result);
  }
  return result;
}

}  // namespace

// ---------------------------------------------------------------- collectives

NCCLWATCH_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                            cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclAllReduce, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kAllReduce, count, datatype, op, -1, stream),
                   [&] { return real(sendbuff, recvbuff, count, datatype, op, comm, stream); });
}

NCCLWATCH_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                            ncclDataType_t datatype, int root, ncclComm_t comm,
                                            cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclBroadcast, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kBroadcast, count, datatype, 0, root, stream),
                   [&] { return real(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

NCCLWATCH_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                        ncclComm_t comm, cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclBcast, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kBroadcast, count, datatype, 0, root, stream),
                   [&] { return real(buff, count, datatype, root, comm, stream); });
}

NCCLWATCH_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                                         cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclReduce, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kReduce, count, datatype, op, root, stream),
                   [&] { return real(sendbuff, recvbuff, count, datatype, op, root, comm, stream); });
}

NCCLWATCH_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclAllGather, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kAllGather, sendcount, datatype, 0, -1, stream),
                   [&] { return real(sendbuff, recvbuff, sendcount, datatype, comm, stream); });
}

NCCLWATCH_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                                cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclReduceScatter, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kReduceScatter, recvcount, datatype, op, -1, stream),
                   [&] { return real(sendbuff, recvbuff, recvcount, datatype, op, comm, stream); });
}

NCCLWATCH_EXPORT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclAlltoAll, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kAlltoAll, count, datatype, 0, -1, stream),
                   [&] { return real(sendbuff, recvbuff, count, datatype, comm, stream); });
}

NCCLWATCH_EXPORT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclGather, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kGather, count, datatype, 0, root, stream),
                   [&] { return real(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

NCCLWATCH_EXPORT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclScatter, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kScatter, count, datatype, 0, root, stream),
                   [&] { return real(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

NCCLWATCH_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                                       ncclComm_t comm, cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclSend, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kSend, count, datatype, 0, peer, stream),
                   [&] { return real(sendbuff, count, datatype, peer, comm, stream); });
}

NCCLWATCH_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                       ncclComm_t comm, cudaStream_t stream) {
  NCCLWATCH_NEXT(kNccl, ncclRecv, ncclSystemError);
  return ObserveOp(comm, Fingerprint(Op::kRecv, count, datatype, 0, peer, stream),
                   [&] { return real(recvbuff, count, datatype, peer, comm, stream); });
}

// ---------------------------------------------------------------- groups

NCCLWATCH_EXPORT ncclResult_t ncclGroupStart() {
  NCCLWATCH_NEXT(kNccl, ncclGroupStart, ncclSystemError);
  ncclwatch::preload::GroupCall group;
  if (!ncclwatch::preload::BeginGroupStart(&group)) return real();
  const ncclResult_t result = real();
  {
    const ncclwatch::preload::KeepErrno keep;
    ncclwatch::preload::EndGroupStart(&group, result);
  }
  return result;
}

NCCLWATCH_EXPORT ncclResult_t ncclGroupEnd() {
  NCCLWATCH_NEXT(kNccl, ncclGroupEnd, ncclSystemError);
  return ObserveGroupEnd(ncclwatch::preload::GroupEndKind::kLaunch, [&] { return real(); });
}

NCCLWATCH_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  NCCLWATCH_NEXT(kNccl, ncclGroupSimulateEnd, ncclSystemError);
  return ObserveGroupEnd(ncclwatch::preload::GroupEndKind::kSimulate, [&] { return real(simInfo); });
}

// ---------------------------------------------------------------- creation

NCCLWATCH_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  NCCLWATCH_NEXT(kNccl, ncclGetUniqueId, ncclSystemError);
  const ncclResult_t result = real(uniqueId);
  {
    const ncclwatch::preload::KeepErrno keep;
    ncclwatch::preload::ObserveUniqueId(uniqueId, result);
  }
  return result;
}

NCCLWATCH_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  NCCLWATCH_NEXT(kNccl, ncclCommInitRank, ncclSystemError);
  ncclwatch::preload::InitCall init;
  const bool observing = ncclwatch::preload::BeginRootInit(&commId, nranks, rank, nullptr, &init);
  return ObserveInit(&init, observing, comm, 1, [&] { return real(comm, nranks, commId, rank); });
}

NCCLWATCH_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                                     ncclConfig_t* config) {
  NCCLWATCH_NEXT(kNccl, ncclCommInitRankConfig, ncclSystemError);
  ncclwatch::preload::InitCall init;
  const bool observing = ncclwatch::preload::BeginRootInit(&commId, nranks, rank, config, &init);
  return ObserveInit(&init, observing, comm, 1, [&] { return real(comm, nranks, commId, rank, config); });
}

NCCLWATCH_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                                       ncclUniqueId* commIds, ncclConfig_t* config) {
  NCCLWATCH_NEXT(kNccl, ncclCommInitRankScalable, ncclSystemError);
  ncclwatch::preload::InitCall init;
  const ncclUniqueId* first = (nId > 0 && commIds != nullptr) ? &commIds[0] : nullptr;
  const bool observing = ncclwatch::preload::BeginRootInit(first, nranks, myrank, config, &init);
  return ObserveInit(&init, observing, newcomm, 1, [&] { return real(newcomm, nranks, myrank, nId, commIds, config); });
}

NCCLWATCH_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  NCCLWATCH_NEXT(kNccl, ncclCommInitAll, ncclSystemError);
  ncclwatch::preload::InitCall init;
  const bool observing = ncclwatch::preload::BeginInitAll(&init);
  return ObserveInit(&init, observing, comms, ndev, [&] { return real(comms, ndev, devlist); });
}

NCCLWATCH_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                            ncclConfig_t* config) {
  NCCLWATCH_NEXT(kNccl, ncclCommSplit, ncclSystemError);
  ncclwatch::preload::InitCall init;
  const bool observing = ncclwatch::preload::BeginSplit(comm, color, config, &init);
  return ObserveInit(&init, observing, newcomm, 1, [&] { return real(comm, color, key, newcomm, config); });
}

NCCLWATCH_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                             ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  NCCLWATCH_NEXT(kNccl, ncclCommShrink, ncclSystemError);
  ncclwatch::preload::InitCall init;
  const bool observing = ncclwatch::preload::BeginShrink(comm, config, &init);
  return ObserveInit(&init, observing, newcomm, 1, [&] {
    return real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  });
}

// ---------------------------------------------------------------- teardown, errors

NCCLWATCH_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  NCCLWATCH_NEXT(kNccl, ncclCommFinalize, ncclSystemError);
  return ObserveTeardown(comm, ncclwatch::preload::Teardown::kFinalize, [&] { return real(comm); });
}

NCCLWATCH_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  NCCLWATCH_NEXT(kNccl, ncclCommDestroy, ncclSystemError);
  return ObserveTeardown(comm, ncclwatch::preload::Teardown::kDestroy, [&] { return real(comm); });
}

NCCLWATCH_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  NCCLWATCH_NEXT(kNccl, ncclCommAbort, ncclSystemError);
  return ObserveTeardown(comm, ncclwatch::preload::Teardown::kAbort, [&] { return real(comm); });
}

NCCLWATCH_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  NCCLWATCH_NEXT(kNccl, ncclCommRevoke, ncclSystemError);
  return ObserveTeardown(comm, ncclwatch::preload::Teardown::kRevoke, [&] { return real(comm, revokeFlags); });
}

NCCLWATCH_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  NCCLWATCH_NEXT(kNccl, ncclCommGetAsyncError, ncclSystemError);
  ncclwatch::preload::ThreadState* thread = nullptr;
  if (!ncclwatch::preload::EnterObserved(&thread)) return real(comm, asyncError);
  const ncclResult_t result = real(comm, asyncError);
  {
    const ncclwatch::preload::KeepErrno keep;
    ncclwatch::preload::LeaveObserved(thread);
    ncclwatch::preload::ObserveAsyncError(comm, result, asyncError);
  }
  return result;
}
