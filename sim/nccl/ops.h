// Operations as recorded at call time and executed when their stream reaches them.
#ifndef NCCLWATCH_SIM_NCCL_OPS_H_
#define NCCLWATCH_SIM_NCCL_OPS_H_

#include <nccl.h>

#include <cstddef>

#include "comm.h"

namespace ncclsim {

enum class CollKind {
  kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kAlltoAll, kGather, kScatter,
  kSend, kRecv
};

struct Op {
  CollKind kind;
  Comm* comm;
  cudaStream_t stream;
  const void* send;
  void* recv;
  size_t count;  // per-rank count as in the API call
  ncclDataType_t datatype;
  ncclRedOp_t redop;
  int root;  // root, or peer for Send/Recv
  uint64_t ticket = 0;  // collectives: position in the comm's call order
};

inline bool IsP2p(CollKind k) { return k == CollKind::kSend || k == CollKind::kRecv; }

// Runs one collective of c to completion (blocking on peers). False if aborted.
bool ExecuteCollective(const Op& op);
// Runs a set of Send/Recv of one communicator concurrently. False if aborted.
bool ExecuteP2p(Comm* c, const Op* const* ops, size_t n);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_OPS_H_
