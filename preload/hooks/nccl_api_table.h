// Every NCCL entry point the preload hooks, once. Adding an API is one row:
//
//   X(kind, name, (parameters), (arguments), tracking)
//
// kind:      collective, p2p, one_sided, group, init, lifecycle, query (documentation and
//            NcclApiKind; what is done around the call is `tracking`);
// tracking:  an expression that builds the tracking object from the parameters
//            (nccl_tracking.h): OpTracking for anything that publishes a ring record,
//            GroupStartTracking/GroupEndTracking, *InitTracking, LifecycleTracking,
//            AsyncErrorTracking, UniqueIdTracking, PassThrough.
//
// Every entry point returns ncclResult_t. Two lists: what NCCL 2.28 has and what 2.29-2.32
// added; both are exported (NEEDED/RPATH callers such as torch reach them) and served
// through dlsym, which never shows a function the real NCCL lacks (README.md).
#ifndef NCCLWATCH_PRELOAD_HOOKS_NCCL_API_TABLE_H_
#define NCCLWATCH_PRELOAD_HOOKS_NCCL_API_TABLE_H_

#include "preload/hooks/nccl_abi_232.h"

#define NCCLWATCH_NCCL_API_228(X)                                                                          \
  X(collective, ncclAllReduce, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,  \
      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, op, comm,   \
      stream), OpTracking(Op::kAllReduce, count, datatype, op, kNoRoot, comm, stream))                         \
  X(collective, ncclBroadcast, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,  \
      int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, root, comm,       \
      stream), OpTracking(Op::kBroadcast, count, datatype, 0, root, comm, stream))                             \
  X(collective, ncclBcast, (void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,      \
      cudaStream_t stream), (buff, count, datatype, root, comm, stream),                                       \
      OpTracking(Op::kBroadcast, count, datatype, 0, root, comm, stream))                                      \
  X(collective, ncclReduce, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,     \
      ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype,   \
      op, root, comm, stream), OpTracking(Op::kReduce, count, datatype, op, root, comm, stream))               \
  X(collective, ncclAllGather, (const void* sendbuff, void* recvbuff, size_t sendcount,                        \
      ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, sendcount,          \
      datatype, comm, stream), OpTracking(Op::kAllGather, sendcount, datatype, 0, kNoRoot, comm, stream))      \
  X(collective, ncclReduceScatter, (const void* sendbuff, void* recvbuff, size_t recvcount,                    \
      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff,     \
      recvcount, datatype, op, comm, stream),                                                                  \
      OpTracking(Op::kReduceScatter, recvcount, datatype, op, kNoRoot, comm, stream))                          \
  X(collective, ncclAlltoAll, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,   \
      ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, comm, stream),              \
      OpTracking(Op::kAlltoAll, count, datatype, 0, kNoRoot, comm, stream))                                    \
  X(collective, ncclGather, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,     \
      int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, root, comm,       \
      stream), OpTracking(Op::kGather, count, datatype, 0, root, comm, stream))                                \
  X(collective, ncclScatter, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,    \
      int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, root, comm,       \
      stream), OpTracking(Op::kScatter, count, datatype, 0, root, comm, stream))                               \
  X(p2p, ncclSend, (const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,    \
      cudaStream_t stream), (sendbuff, count, datatype, peer, comm, stream),                                   \
      OpTracking(Op::kSend, count, datatype, 0, peer, comm, stream))                                           \
  X(p2p, ncclRecv, (void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,          \
      cudaStream_t stream), (recvbuff, count, datatype, peer, comm, stream),                                   \
      OpTracking(Op::kRecv, count, datatype, 0, peer, comm, stream))                                           \
  X(group, ncclGroupStart, (), (), GroupStartTracking())                                                      \
  X(group, ncclGroupEnd, (), (), GroupEndTracking(GroupEndKind::kLaunch))                                     \
  X(group, ncclGroupSimulateEnd, (ncclSimInfo_t * simInfo), (simInfo),                                         \
      GroupEndTracking(GroupEndKind::kSimulate))                                                               \
  X(query, ncclGetUniqueId, (ncclUniqueId * uniqueId), (uniqueId), UniqueIdTracking(uniqueId))                 \
  X(init, ncclCommInitRank, (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank),                    \
      (comm, nranks, commId, rank), RootInitTracking(&commId, nranks, rank, nullptr, comm))                    \
  X(init, ncclCommInitRankConfig, (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank,               \
      ncclConfig_t* config), (comm, nranks, commId, rank, config),                                             \
      RootInitTracking(&commId, nranks, rank, config, comm))                                                   \
  X(init, ncclCommInitRankScalable, (ncclComm_t * newcomm, int nranks, int myrank, int nId,                    \
      ncclUniqueId* commIds, ncclConfig_t* config), (newcomm, nranks, myrank, nId, commIds, config),           \
      RootInitTracking(FirstId(nId, commIds), nranks, myrank, config, newcomm))                                \
  X(init, ncclCommInitAll, (ncclComm_t * comms, int ndev, const int* devlist), (comms, ndev, devlist),         \
      InitAllTracking(comms, ndev))                                                                            \
  X(init, ncclCommSplit, (ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config),     \
      (comm, color, key, newcomm, config), SplitTracking(comm, color, config, newcomm))                        \
  X(init, ncclCommShrink, (ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,                      \
      ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags), (comm, excludeRanksList,                    \
      excludeRanksCount, newcomm, config, shrinkFlags), ShrinkTracking(comm, config, newcomm))                 \
  X(lifecycle, ncclCommFinalize, (ncclComm_t comm), (comm), LifecycleTracking(comm, Teardown::kFinalize))      \
  X(lifecycle, ncclCommDestroy, (ncclComm_t comm), (comm), LifecycleTracking(comm, Teardown::kDestroy))        \
  X(lifecycle, ncclCommAbort, (ncclComm_t comm), (comm), LifecycleTracking(comm, Teardown::kAbort))            \
  X(lifecycle, ncclCommRevoke, (ncclComm_t comm, int revokeFlags), (comm, revokeFlags),                        \
      LifecycleTracking(comm, Teardown::kRevoke))                                                              \
  X(query, ncclCommGetAsyncError, (ncclComm_t comm, ncclResult_t * asyncError), (comm, asyncError),            \
      AsyncErrorTracking(comm, asyncError))

#define NCCLWATCH_NCCL_API_229_232(X)                                                                      \
  X(collective, ncclAllReduceConfig, (const void* sendbuff, void* recvbuff, size_t count,                      \
      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,                           \
      const ncclCollConfig_t* config), (sendbuff, recvbuff, count, datatype, op, comm, stream, config),         \
      OpTracking(Op::kAllReduce, count, datatype, op, kNoRoot, comm, stream))                                  \
  X(collective, ncclBroadcastConfig, (const void* sendbuff, void* recvbuff, size_t count,                      \
      ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream,                                 \
      const ncclCollConfig_t* config), (sendbuff, recvbuff, count, datatype, root, comm, stream, config),       \
      OpTracking(Op::kBroadcast, count, datatype, 0, root, comm, stream))                                      \
  X(collective, ncclReduceConfig, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, \
      ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config),         \
      (sendbuff, recvbuff, count, datatype, op, root, comm, stream, config),                                   \
      OpTracking(Op::kReduce, count, datatype, op, root, comm, stream))                                        \
  X(collective, ncclAllGatherConfig, (const void* sendbuff, void* recvbuff, size_t sendcount,                  \
      ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config),          \
      (sendbuff, recvbuff, sendcount, datatype, comm, stream, config),                                         \
      OpTracking(Op::kAllGather, sendcount, datatype, 0, kNoRoot, comm, stream))                               \
  X(collective, ncclReduceScatterConfig, (const void* sendbuff, void* recvbuff, size_t recvcount,              \
      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,                           \
      const ncclCollConfig_t* config), (sendbuff, recvbuff, recvcount, datatype, op, comm, stream, config),     \
      OpTracking(Op::kReduceScatter, recvcount, datatype, op, kNoRoot, comm, stream))                          \
  X(collective, ncclAlltoAllConfig, (const void* sendbuff, void* recvbuff, size_t count,                       \
      ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config),          \
      (sendbuff, recvbuff, count, datatype, comm, stream, config),                                             \
      OpTracking(Op::kAlltoAll, count, datatype, 0, kNoRoot, comm, stream))                                    \
  X(collective, ncclGatherConfig, (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, \
      int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config),                         \
      (sendbuff, recvbuff, count, datatype, root, comm, stream, config),                                       \
      OpTracking(Op::kGather, count, datatype, 0, root, comm, stream))                                         \
  X(collective, ncclScatterConfig, (const void* sendbuff, void* recvbuff, size_t count,                        \
      ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream,                                 \
      const ncclCollConfig_t* config), (sendbuff, recvbuff, count, datatype, root, comm, stream, config),       \
      OpTracking(Op::kScatter, count, datatype, 0, root, comm, stream))                                        \
  X(one_sided, ncclPutSignal, (const void* localbuff, size_t count, ncclDataType_t datatype, int peer,         \
      ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,    \
      cudaStream_t stream), (localbuff, count, datatype, peer, peerWin, peerWinOffset, sigIdx, ctx, flags,     \
      comm, stream), OpTracking(Op::kPutSignal, count, datatype, 0, peer, comm, stream))                       \
  X(one_sided, ncclSignal, (int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,                \
      cudaStream_t stream), (peer, sigIdx, ctx, flags, comm, stream),                                          \
      OpTracking(Op::kSignal, 0, ncclInt8, 0, peer, comm, stream))                                             \
  X(one_sided, ncclWaitSignal, (int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm,                 \
      cudaStream_t stream), (nDesc, signalDescs, comm, stream),                                                \
      OpTracking(Op::kWaitSignal, SignalsAwaited(nDesc, signalDescs), ncclInt8, 0,                             \
                 PeerAwaited(nDesc, signalDescs), comm, stream))                                               \
  X(init, ncclCommGrow, (ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank,                  \
      ncclComm_t* newcomm, ncclConfig_t* config), (comm, nRanks, uniqueId, rank, newcomm, config),             \
      GrowTracking(comm, uniqueId, nRanks, rank, config, newcomm))                                             \
  X(lifecycle, ncclCommSuspend, (ncclComm_t comm, int flags), (comm, flags),                                   \
      LifecycleTracking(comm, Teardown::kSuspend))                                                             \
  X(lifecycle, ncclCommResume, (ncclComm_t comm), (comm), LifecycleTracking(comm, Teardown::kResume))          \
  X(query, ncclCommGetUniqueId, (ncclComm_t comm, ncclUniqueId * uniqueId), (comm, uniqueId), PassThrough(comm)) \
  X(query, ncclSetEncryption, (const ncclEncryptionConfig_t* config), (config), PassThrough())

#define NCCLWATCH_NCCL_API(X) NCCLWATCH_NCCL_API_228(X) NCCLWATCH_NCCL_API_229_232(X)

#endif  // NCCLWATCH_PRELOAD_HOOKS_NCCL_API_TABLE_H_
