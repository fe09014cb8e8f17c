// Collective, point-to-point and group entry points: validate, then record or launch.
#include <nccl.h>

#include <string>

#include "export.h"
#include "last_error.h"
#include "launch.h"
#include "reduction.h"

using ncclsim::CollKind;
using ncclsim::SetLastError;

namespace {

bool NeedsRedOp(CollKind k) {
  return k == CollKind::kAllReduce || k == CollKind::kReduce || k == CollKind::kReduceScatter;
}
bool HasRoot(CollKind k) {
  return k == CollKind::kBroadcast || k == CollKind::kReduce || k == CollKind::kGather ||
         k == CollKind::kScatter || k == CollKind::kSend || k == CollKind::kRecv;
}

ncclResult_t Validate(const ncclsim::Op& op, const char* api) {
  const std::string name(api);
  if (op.comm == nullptr) {
    SetLastError(name + ": comm argument is NULL");
    return ncclInvalidArgument;
  }
  if (op.comm->init_state.load() != ncclSuccess && !ncclsim::InGroup()) {
    SetLastError(name + ": communicator is not initialized (or its init failed)");
    return ncclInvalidUsage;
  }
  if (op.comm->aborted.load()) {
    SetLastError(name + ": communicator was aborted or revoked");
    return ncclInvalidUsage;
  }
  if (ncclsim::DataTypeSize(op.datatype) == 0) {
    SetLastError(name + ": invalid datatype " + std::to_string(op.datatype));
    return ncclInvalidArgument;
  }
  if (NeedsRedOp(op.kind) && !ncclsim::IsBuiltinRedOp(op.redop)) {
    SetLastError(name + ": invalid or unsupported reduction op " + std::to_string(op.redop) +
                 " (the sim supports sum, prod, max, min, avg)");
    return ncclInvalidArgument;  // the sim never creates custom (PreMulSum) ops
  }
  if (HasRoot(op.kind) && (op.root < 0 || op.root >= op.comm->nranks)) {
    SetLastError(name + ": root/peer " + std::to_string(op.root) + " out of range");
    return ncclInvalidArgument;
  }
  const bool is_root = op.comm->rank == op.root;
  const bool rooted_input = op.kind == CollKind::kBroadcast || op.kind == CollKind::kScatter;
  const bool rooted_output = op.kind == CollKind::kReduce || op.kind == CollKind::kGather;
  const bool needs_send = op.count > 0 && op.kind != CollKind::kRecv && (!rooted_input || is_root);
  const bool needs_recv = op.count > 0 && op.kind != CollKind::kSend && (!rooted_output || is_root);
  if ((needs_send && op.send == nullptr) || (needs_recv && op.recv == nullptr)) {
    SetLastError(name + ": NULL " + (needs_send && op.send == nullptr ? "sendbuff" : "recvbuff"));
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

ncclResult_t Submit(CollKind kind, const char* api, const void* send, void* recv, size_t count,
                    ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  const ncclsim::Op o{kind, comm, stream, send, recv, count, type, op, root};
  if (ncclResult_t r = Validate(o, api); r != ncclSuccess) return r;
  return ncclsim::SubmitOp(o);
}

}  // namespace

NCCLSIM_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return Submit(CollKind::kAllReduce, "ncclAllReduce", sendbuff, recvbuff, count, datatype, op, 0, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return Submit(CollKind::kBroadcast, "ncclBroadcast", sendbuff, recvbuff, count, datatype, ncclSum, root,
                comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root,
            ncclComm_t comm, cudaStream_t stream) {
  // Through the PLT like real NCCL, so a hook sees both calls.
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return Submit(CollKind::kReduce, "ncclReduce", sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return Submit(CollKind::kAllGather, "ncclAllGather", sendbuff, recvbuff, sendcount, datatype, ncclSum, 0,
                comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount,
            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return Submit(CollKind::kReduceScatter, "ncclReduceScatter", sendbuff, recvbuff, recvcount, datatype, op, 0,
                comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return Submit(CollKind::kAlltoAll, "ncclAlltoAll", sendbuff, recvbuff, count, datatype, ncclSum, 0, comm,
                stream);
}

NCCLSIM_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return Submit(CollKind::kGather, "ncclGather", sendbuff, recvbuff, count, datatype, ncclSum, root, comm,
                stream);
}

NCCLSIM_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return Submit(CollKind::kScatter, "ncclScatter", sendbuff, recvbuff, count, datatype, ncclSum, root, comm,
                stream);
}

NCCLSIM_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
            ncclComm_t comm, cudaStream_t stream) {
  return Submit(CollKind::kSend, "ncclSend", sendbuff, nullptr, count, datatype, ncclSum, peer, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
            ncclComm_t comm, cudaStream_t stream) {
  return Submit(CollKind::kRecv, "ncclRecv", nullptr, recvbuff, count, datatype, ncclSum, peer, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclGroupStart) { return ncclsim::GroupStart(); }
NCCLSIM_API(ncclResult_t, ncclGroupEnd) { return ncclsim::GroupEnd(); }
NCCLSIM_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  return ncclsim::GroupSimulateEnd(simInfo);
}

NCCLSIM_API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
            ncclScalarResidence_t residence, ncclComm_t comm) {
  (void)op, (void)scalar, (void)datatype, (void)residence, (void)comm;
  SetLastError("ncclRedOpCreatePreMulSum: not supported by the sim");
  return ncclInvalidUsage;
}

NCCLSIM_API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t op, ncclComm_t comm) {
  (void)op, (void)comm;
  SetLastError("ncclRedOpDestroy: the sim creates no custom reduction ops");
  return ncclInvalidUsage;
}
