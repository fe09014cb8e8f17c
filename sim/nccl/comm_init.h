// Creating and tearing down communicators (shared by InitRank*, InitAll, Split, Shrink).
#ifndef NCCLWATCH_SIM_NCCL_COMM_INIT_H_
#define NCCLWATCH_SIM_NCCL_COMM_INIT_H_

#include <nccl.h>

#include <string>

#include "comm.h"

namespace ncclsim {

struct InitRequest {
  uint64_t hash;
  int nranks;
  int rank;
  ncclConfig_t* config;  // may be null
  std::string api;       // "ncclCommInitRank" / "ncclCommSplit" ... for NCCL_DEBUG lines
  std::string extra;     // extra fields for the debug line (split: parent/color/key)
};

// Validates, creates the comm and attaches (synchronously, in the background for
// nonblocking configs, or in the background until GroupEnd inside a group).
ncclResult_t StartCommInit(const InitRequest& req, ncclComm_t* out);

// 128 random bytes from /dev/urandom (ncclGetUniqueId, ncclCommGetUniqueId).
ncclResult_t NewUniqueId(ncclUniqueId* id, const char* api);

// Frees everything of c; waits for in-flight work unless aborted.
void ReleaseComm(Comm* c);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_COMM_INIT_H_
