// The per-collective-config entry points of NCCL 2.31 (nccl*Config). The config tunes
// kernels, algorithms and profiling, none of which the sim has: a valid config (or NULL)
// makes each call behave exactly like its plain counterpart; an invalid one is refused.
#include <cstddef>
#include <string>

#include "coll_submit.h"
#include "export.h"
#include "last_error.h"
#include "nccl_api_232.h"

using ncclsim::CollKind;
using ncclsim::v232::ncclCollConfig_t;

namespace {

constexpr unsigned int kFirstCollConfigVersion = 23100;  // NCCL 2.31.0 introduced the struct

// NULL is allowed. Otherwise the header must come from NCCL_COLLCONFIG_INITIALIZER: the magic,
// a version of 2.31 or later and a size that covers at least the fields up to `ext`.
ncclResult_t CheckCollConfig(const ncclCollConfig_t* config, const char* api) {
  if (config == nullptr) return ncclSuccess;
  std::string problem;
  if (config->magic != ncclsim::v232::kApiMagic) {
    problem = "not initialized with NCCL_COLLCONFIG_INITIALIZER (bad magic)";
  } else if (config->version < kFirstCollConfigVersion) {
    problem = "bad version " + std::to_string(config->version);
  } else if (config->size < offsetof(ncclCollConfig_t, minCTAs) ||
             (config->version >= 23200 && config->size < sizeof(ncclCollConfig_t))) {
    problem = "bad size " + std::to_string(config->size) + " for version " + std::to_string(config->version);
  }
  if (problem.empty()) return ncclSuccess;
  ncclsim::SetLastError(std::string(api) + ": ncclCollConfig_t " + problem);
  return ncclInvalidArgument;
}

ncclResult_t SubmitConfigured(const ncclCollConfig_t* config, CollKind kind, const char* api, const void* send,
                              void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                              ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t r = CheckCollConfig(config, api); r != ncclSuccess) return r;
  return ncclsim::SubmitCall(kind, api, send, recv, count, type, op, root, comm, stream);
}

}  // namespace

NCCLSIM_API(ncclResult_t, ncclAllReduceConfig, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
            const ncclCollConfig_t* config) {
  return SubmitConfigured(config, CollKind::kAllReduce, "ncclAllReduceConfig", sendbuff, recvbuff, count, datatype,
                          op, 0, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclBroadcastConfig, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream,
            const ncclCollConfig_t* config) {
  return SubmitConfigured(config, CollKind::kBroadcast, "ncclBroadcastConfig", sendbuff, recvbuff, count, datatype,
                          ncclSum, root, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclReduceConfig, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream,
            const ncclCollConfig_t* config) {
  return SubmitConfigured(config, CollKind::kReduce, "ncclReduceConfig", sendbuff, recvbuff, count, datatype, op,
                          root, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclAllGatherConfig, const void* sendbuff, void* recvbuff, size_t sendcount,
            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return SubmitConfigured(config, CollKind::kAllGather, "ncclAllGatherConfig", sendbuff, recvbuff, sendcount,
                          datatype, ncclSum, 0, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclReduceScatterConfig, const void* sendbuff, void* recvbuff, size_t recvcount,
            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
            const ncclCollConfig_t* config) {
  return SubmitConfigured(config, CollKind::kReduceScatter, "ncclReduceScatterConfig", sendbuff, recvbuff,
                          recvcount, datatype, op, 0, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclAlltoAllConfig, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return SubmitConfigured(config, CollKind::kAlltoAll, "ncclAlltoAllConfig", sendbuff, recvbuff, count, datatype,
                          ncclSum, 0, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclGatherConfig, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream,
            const ncclCollConfig_t* config) {
  return SubmitConfigured(config, CollKind::kGather, "ncclGatherConfig", sendbuff, recvbuff, count, datatype,
                          ncclSum, root, comm, stream);
}

NCCLSIM_API(ncclResult_t, ncclScatterConfig, const void* sendbuff, void* recvbuff, size_t count,
            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream,
            const ncclCollConfig_t* config) {
  return SubmitConfigured(config, CollKind::kScatter, "ncclScatterConfig", sendbuff, recvbuff, count, datatype,
                          ncclSum, root, comm, stream);
}
