// Growing a communicator (NCCL 2.29): ncclCommGetUniqueId on one existing rank (the root),
// then ncclCommGrow on every existing rank (rank = -1; only the root passes the id) and on
// every new rank (comm = NULL, the id, its assigned rank). The result is a new communicator
// in which existing ranks keep their numbers; the id is consumed by a successful grow.
#include <array>
#include <string>
#include <vector>

#include "coll_submit.h"
#include "comm_hash.h"
#include "comm_init.h"
#include "export.h"
#include "last_error.h"
#include "nccl_api_232.h"

using ncclsim::SetLastError;

namespace {

ncclResult_t Fail(ncclResult_t code, const std::string& message) {
  SetLastError("ncclCommGrow: " + message);
  return code;
}

uint64_t IdHash(const ncclUniqueId& id) { return ncclsim::HashUniqueId(id.internal, NCCL_UNIQUE_ID_BYTES); }

// Every existing rank learns the root's id hash through the parent; 0 when not exactly one root.
uint64_t ShareRootHash(ncclComm_t comm, uint64_t mine, bool* aborted) {
  const int32_t published[2] = {static_cast<int32_t>(mine & 0xffffffffu), static_cast<int32_t>(mine >> 32)};
  std::vector<std::array<int32_t, 2>> all;
  *aborted = !ncclsim::BootAllGather(comm, published, &all);
  uint64_t root_hash = 0;
  int roots = 0;
  for (const auto& entry : all) {
    const uint64_t h = static_cast<uint32_t>(entry[0]) | (static_cast<uint64_t>(static_cast<uint32_t>(entry[1])) << 32);
    if (h != 0) ++roots, root_hash = h;
  }
  return roots == 1 ? root_hash : 0;
}

ncclResult_t GrowExisting(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank,
                          ncclComm_t* newcomm, ncclConfig_t* config) {
  if (ncclResult_t r = ncclsim::CheckUsable(comm, "ncclCommGrow"); r != ncclSuccess) return r;
  if (rank != -1) return Fail(ncclInvalidArgument, "existing ranks must pass rank = -1");
  if (nRanks <= comm->nranks) return Fail(ncclInvalidArgument, "nRanks must exceed the current size");
  if (uniqueId != nullptr && (!comm->grow_id_pending || IdHash(*uniqueId) != comm->grow_hash))
    return Fail(ncclInvalidUsage, "uniqueId was not made by ncclCommGetUniqueId on this comm, or is consumed");
  bool aborted = false;
  const uint64_t hash = ShareRootHash(comm, uniqueId != nullptr ? IdHash(*uniqueId) : 0, &aborted);
  if (aborted) return Fail(ncclInvalidUsage, "communicator aborted while growing");
  if (hash == 0) return Fail(ncclInvalidUsage, "exactly one existing rank (the root) must pass the uniqueId");
  if (uniqueId != nullptr) comm->grow_id_pending = false;
  ncclConfig_t inherited = NCCL_CONFIG_INITIALIZER;
  inherited.blocking = comm->blocking ? 1 : 0;
  return ncclsim::StartCommInit(ncclsim::InitRequest{hash, nRanks, comm->rank,
                                                     config != nullptr ? config : &inherited, "ncclCommGrow", ""},
                                newcomm);
}

}  // namespace

NCCLSIM_API(ncclResult_t, ncclCommGetUniqueId, ncclComm_t comm, ncclUniqueId* uniqueId) {
  if (ncclResult_t r = ncclsim::CheckUsable(comm, "ncclCommGetUniqueId"); r != ncclSuccess) return r;
  if (comm->grow_id_pending) {
    SetLastError("ncclCommGetUniqueId: the previous id has not been consumed by ncclCommGrow yet");
    return ncclInvalidUsage;
  }
  if (ncclResult_t r = ncclsim::NewUniqueId(uniqueId, "ncclCommGetUniqueId"); r != ncclSuccess) return r;
  comm->grow_hash = IdHash(*uniqueId);
  comm->grow_id_pending = true;
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommGrow, ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank,
            ncclComm_t* newcomm, ncclConfig_t* config) {
  if (newcomm == nullptr) return Fail(ncclInvalidArgument, "newcomm argument is NULL");
  *newcomm = nullptr;
  if (comm != nullptr) return GrowExisting(comm, nRanks, uniqueId, rank, newcomm, config);
  if (uniqueId == nullptr) return Fail(ncclInvalidArgument, "a new rank (comm = NULL) must pass the uniqueId");
  if (rank < 0 || rank >= nRanks) return Fail(ncclInvalidArgument, "rank " + std::to_string(rank) + " out of range");
  return ncclsim::StartCommInit(ncclsim::InitRequest{IdHash(*uniqueId), nRanks, rank, config, "ncclCommGrow", ""},
                                newcomm);
}
