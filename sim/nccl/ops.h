// Operations as recorded at call time and executed when their stream reaches them.
#ifndef NCCLWATCH_SIM_NCCL_OPS_H_
#define NCCLWATCH_SIM_NCCL_OPS_H_

#include <nccl.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "comm.h"
#include "nccl_api_232.h"
#include "premulsum.h"

namespace ncclsim {

enum class CollKind {
  kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kAlltoAll, kGather, kScatter,
  kSend, kRecv,
  kPutSignal, kSignal, kWaitSignal  // one-sided (2.29): no rendezvous, no turn in the call order
};

// Arguments of the one-sided ops beyond those of Op.
struct OneSidedArgs {
  int window_slot = 0;  // PutSignal: the window's slot (read at call time: it may be deregistered early)
  size_t offset = 0;
  int sig_index = 0;
  int context = 0;
  std::vector<v232::ncclWaitSignalDesc_t> waits;  // WaitSignal
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
  int root;  // root, or peer for Send/Recv and one-sided ops
  uint64_t ticket = 0;  // collectives: position in the comm's call order
  uint64_t seq = 0;     // collectives and Send/Recv: NCCLSIM_FAULT number, 1-based, issue order
  // Replayed from a CUDA graph: the replay's number on this comm and the op's place in it
  // (both 1-based; 0 for eager ops), what NCCLSIM_FAULT replay=K,seq=J names.
  uint64_t replay = 0;
  uint64_t replay_seq = 0;
  std::optional<PreMulSum> premul = std::nullopt;  // redop is a PreMulSum op
  std::shared_ptr<const OneSidedArgs> one_sided = nullptr;
};

inline bool IsP2p(CollKind k) { return k == CollKind::kSend || k == CollKind::kRecv; }
inline bool IsOneSided(CollKind k) {
  return k == CollKind::kPutSignal || k == CollKind::kSignal || k == CollKind::kWaitSignal;
}
inline bool IsCollective(CollKind k) { return !IsP2p(k) && !IsOneSided(k); }

// Runs one collective of c to completion (blocking on peers). False if aborted.
bool ExecuteCollective(const Op& op);
// Runs a set of Send/Recv of one communicator concurrently. False if aborted.
bool ExecuteP2p(Comm* c, const Op* const* ops, size_t n);
// Runs one PutSignal, Signal or WaitSignal (window.cc / one_sided.cc). False if aborted.
bool ExecuteOneSided(const Op& op);
// NCCLSIM_FAULT for op.seq (op_faults.cc). MarkFaultError runs before the op joins its peers
// (error: the async error turns ncclRemoteError); ApplyFaults after (die, hang, slow). False
// when the op must not complete: hung until abort, or aborted while slowed.
void MarkFaultError(const Op& op);
bool ApplyFaults(const Op& op);
// mismatch_completes: collective op.seq completes even if the ranks' calls disagree.
bool MismatchCompletes(const Op& op);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_OPS_H_
