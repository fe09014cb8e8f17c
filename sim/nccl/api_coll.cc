// Collective, point-to-point and group entry points: validate, then record or launch.
#include <nccl.h>

#include "coll_submit.h"
#include "export.h"
#include "launch.h"

using ncclsim::CollKind;
using ncclsim::SubmitCall;

NCCLSIM_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return SubmitCall(CollKind::kAllReduce, "ncclAllReduce", sendbuff, recvbuff, count, datatype, op, 0, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return SubmitCall(CollKind::kBroadcast, "ncclBroadcast", sendbuff, recvbuff, count, datatype, ncclSum, root,
                comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root,
            ncclComm_t comm, cudaStream_t stream) {
  // Through the PLT like real NCCL, so a hook sees both calls.
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return SubmitCall(CollKind::kReduce, "ncclReduce", sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return SubmitCall(CollKind::kAllGather, "ncclAllGather", sendbuff, recvbuff, sendcount, datatype, ncclSum, 0,
                comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount,
            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return SubmitCall(CollKind::kReduceScatter, "ncclReduceScatter", sendbuff, recvbuff, recvcount, datatype, op, 0,
                comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return SubmitCall(CollKind::kAlltoAll, "ncclAlltoAll", sendbuff, recvbuff, count, datatype, ncclSum, 0, comm,
                stream);
}

NCCLSIM_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return SubmitCall(CollKind::kGather, "ncclGather", sendbuff, recvbuff, count, datatype, ncclSum, root, comm,
                stream);
}

NCCLSIM_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return SubmitCall(CollKind::kScatter, "ncclScatter", sendbuff, recvbuff, count, datatype, ncclSum, root, comm,
                stream);
}

NCCLSIM_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
            ncclComm_t comm, cudaStream_t stream) {
  return SubmitCall(CollKind::kSend, "ncclSend", sendbuff, nullptr, count, datatype, ncclSum, peer, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
            ncclComm_t comm, cudaStream_t stream) {
  return SubmitCall(CollKind::kRecv, "ncclRecv", nullptr, recvbuff, count, datatype, ncclSum, peer, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclGroupStart) { return ncclsim::GroupStart(); }
NCCLSIM_API(ncclResult_t, ncclGroupEnd) { return ncclsim::GroupEnd(); }
NCCLSIM_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  return ncclsim::GroupSimulateEnd(simInfo);
}
