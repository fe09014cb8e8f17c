#include "coll_submit.h"

#include <cstdio>
#include <string>

#include "last_error.h"
#include "launch.h"
#include "reduction.h"

namespace ncclsim {
namespace {

bool NeedsRedOp(CollKind k) {
  return k == CollKind::kAllReduce || k == CollKind::kReduce || k == CollKind::kReduceScatter;
}
bool HasRoot(CollKind k) {
  return k == CollKind::kBroadcast || k == CollKind::kReduce || k == CollKind::kGather ||
         k == CollKind::kScatter || k == CollKind::kSend || k == CollKind::kRecv;
}

// Built-in ops pass; a PreMulSum op must belong to comm and match the datatype. Fills op->premul.
ncclResult_t CheckRedOp(Op* op, const std::string& api) {
  if (IsBuiltinRedOp(op->redop)) return ncclSuccess;
  std::lock_guard<std::mutex> lock(op->comm->mu);
  auto it = op->comm->redops.find(op->redop);
  if (it == op->comm->redops.end()) {
    SetLastError(api + ": invalid reduction op " + std::to_string(op->redop) +
                 " (not built in, nor created by ncclRedOpCreatePreMulSum on this communicator)");
    return ncclInvalidArgument;
  }
  if (it->second.datatype != op->datatype) {
    SetLastError(api + ": reduction op " + std::to_string(op->redop) + " was created for datatype " +
                 std::to_string(it->second.datatype) + ", not " + std::to_string(op->datatype));
    return ncclInvalidArgument;
  }
  op->premul = it->second;
  return ncclSuccess;
}

ncclResult_t CheckBuffers(const Op& op, const std::string& name) {
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

ncclResult_t Validate(Op* op, const char* api) {
  const std::string name(api);
  if (ncclResult_t r = CheckUsable(op->comm, api); r != ncclSuccess) return r;
  if (DataTypeSize(op->datatype) == 0) {
    SetLastError(name + ": invalid datatype " + std::to_string(op->datatype));
    return ncclInvalidArgument;
  }
  if (NeedsRedOp(op->kind)) {
    if (ncclResult_t r = CheckRedOp(op, name); r != ncclSuccess) return r;
  }
  if (HasRoot(op->kind) && (op->root < 0 || op->root >= op->comm->nranks)) {
    SetLastError(name + ": root/peer " + std::to_string(op->root) + " out of range");
    return ncclInvalidArgument;
  }
  return CheckBuffers(*op, name);
}

const char* CollName(CollKind k) {
  switch (k) {
    case CollKind::kAllReduce: return "AllReduce";
    case CollKind::kBroadcast: return "Broadcast";
    case CollKind::kReduce: return "Reduce";
    case CollKind::kAllGather: return "AllGather";
    case CollKind::kReduceScatter: return "ReduceScatter";
    case CollKind::kAlltoAll: return "AlltoAll";
    case CollKind::kGather: return "Gather";
    case CollKind::kScatter: return "Scatter";
    case CollKind::kSend: return "Send";
    case CollKind::kRecv: return "Recv";
    default: return "OneSided";
  }
}

// Real NCCL's NCCL_DEBUG_SUBSYS=COLL line, one per accepted call, in issue order. Tests use it
// as an oracle that does not depend on ncclwatch: which collectives each rank really issued.
void LogCall(const Op& op) {
  if (!DebugSubsysEnabled("COLL")) return;
  char line[512];
  std::snprintf(line, sizeof line,
                "%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p "
                "[nranks=%d] stream %p",
                CollName(op.kind), static_cast<unsigned long>(op.comm->debug_op_count++), op.send, op.recv,
                op.count, static_cast<int>(op.datatype), static_cast<int>(op.redop), op.root,
                static_cast<void*>(op.comm), op.comm->nranks, static_cast<void*>(op.stream));
  DebugInfo(op.comm->device, line);
}

}  // namespace

ncclResult_t CheckUsable(ncclComm_t comm, const char* api) {
  const std::string name(api);
  if (comm == nullptr) {
    SetLastError(name + ": comm argument is NULL");
    return ncclInvalidArgument;
  }
  if (comm->init_state.load() != ncclSuccess && !InGroup()) {
    SetLastError(name + ": communicator is not initialized (or its init failed)");
    return ncclInvalidUsage;
  }
  if (comm->aborted.load()) {
    SetLastError(name + ": communicator was aborted or revoked");
    return ncclInvalidUsage;
  }
  if (comm->suspended.load()) {
    SetLastError(name + ": communicator is suspended (ncclCommSuspend); call ncclCommResume first");
    return ncclInvalidUsage;
  }
  return ncclSuccess;
}

ncclResult_t SubmitCall(CollKind kind, const char* api, const void* send, void* recv, size_t count,
                        ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  Op o{kind, comm, stream, send, recv, count, type, op, root};
  if (ncclResult_t r = Validate(&o, api); r != ncclSuccess) return r;
  LogCall(o);
  return SubmitOp(o);
}

}  // namespace ncclsim
