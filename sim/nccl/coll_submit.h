// The common path of every collective and Send/Recv entry point (plain and nccl*Config):
// validate the arguments as NCCL does, then record the op in the group or launch it.
#ifndef NCCLWATCH_SIM_NCCL_COLL_SUBMIT_H_
#define NCCLWATCH_SIM_NCCL_COLL_SUBMIT_H_

#include <nccl.h>

#include "ops.h"

namespace ncclsim {

// `api` names the entry point in GetLastError messages. ncclInvalidArgument for bad
// arguments, ncclInvalidUsage for a comm that is not usable (uninitialized, aborted, suspended).
ncclResult_t SubmitCall(CollKind kind, const char* api, const void* send, void* recv, size_t count,
                        ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);

// The checks every op of a communicator passes first; ncclSuccess when comm may take new work.
ncclResult_t CheckUsable(ncclComm_t comm, const char* api);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_COLL_SUBMIT_H_
