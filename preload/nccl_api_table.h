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
// Every entry point returns ncclResult_t. Two lists: what NCCL 2.28 has (exported as plain
// global symbols, reached through NEEDED/RPATH) and what 2.29-2.32 added (reached through
// dlsym only, so that the global scope never shows a feature the real NCCL lacks; see
// README.md).
#ifndef NCCLWATCH_PRELOAD_NCCL_API_TABLE_H_
#define NCCLWATCH_PRELOAD_NCCL_API_TABLE_H_

#include "preload/nccl_abi_232.h"

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

#define NCCLWATCH_NCCL_API_229_232(X)

#define NCCLWATCH_NCCL_API(X) NCCLWATCH_NCCL_API_228(X) NCCLWATCH_NCCL_API_229_232(X)

#endif  // NCCLWATCH_PRELOAD_NCCL_API_TABLE_H_
