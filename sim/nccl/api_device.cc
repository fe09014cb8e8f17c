// Host-side device-API entry points (nccl_device/*.h). Device-initiated traffic cannot
// exist without a GPU, so these refuse (or return neutral values) with a clear message.
// The device headers need nvcc, so the few types used here are mirrored by layout.
#include <nccl.h>

#include <string>

#include "comm.h"
#include "export.h"
#include "last_error.h"

namespace {

struct Team {  // layout of struct ncclTeam
  int nRanks, rank, stride;
};
struct DevComm;
struct DevCommRequirements;
struct DevResourceRequirements;
struct OpaqueHandle;

ncclResult_t Refuse(const char* api) {
  ncclsim::SetLastError(std::string(api) + ": the NCCL device API is not implemented by the sim");
  return ncclInvalidUsage;
}

Team WorldTeam(ncclComm_t comm) {
  if (comm == nullptr) return Team{0, 0, 1};
  return Team{comm->nranks, comm->rank, 1};
}

}  // namespace

NCCLSIM_API(ncclResult_t, ncclDevCommCreate, ncclComm_t comm, const DevCommRequirements* reqs,
            DevComm* outDevComm) {
  (void)comm, (void)reqs, (void)outDevComm;
  return Refuse("ncclDevCommCreate");
}
NCCLSIM_API(ncclResult_t, ncclDevCommDestroy, ncclComm_t comm, const DevComm* devComm) {
  (void)comm, (void)devComm;
  return Refuse("ncclDevCommDestroy");
}
NCCLSIM_API(Team, ncclTeamWorld, ncclComm_t comm) { return WorldTeam(comm); }
// Every rank of a sim job is on one host, so the LSA team is the world and rails are trivial.
NCCLSIM_API(Team, ncclTeamLsa, ncclComm_t comm) { return WorldTeam(comm); }
NCCLSIM_API(Team, ncclTeamRail, ncclComm_t comm) {
  (void)comm;
  return Team{1, 0, comm != nullptr ? comm->nranks : 1};
}
NCCLSIM_API(int, ncclTeamRankToWorld, ncclComm_t comm, Team team, int rank) {
  return comm != nullptr ? comm->rank + (rank - team.rank) * team.stride : -1;
}
NCCLSIM_API(int, ncclTeamRankToLsa, ncclComm_t comm, Team team, int rank) {
  return comm != nullptr ? comm->rank + (rank - team.rank) * team.stride : -1;
}
NCCLSIM_API(ncclResult_t, ncclLsaBarrierCreateRequirement, Team team, int nBarriers, OpaqueHandle* outHandle,
            DevResourceRequirements* outReq) {
  (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return Refuse("ncclLsaBarrierCreateRequirement");
}
NCCLSIM_API(ncclResult_t, ncclGinBarrierCreateRequirement, ncclComm_t comm, Team team, int nBarriers,
            OpaqueHandle* outHandle, DevResourceRequirements* outReq) {
  (void)comm, (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return Refuse("ncclGinBarrierCreateRequirement");
}
NCCLSIM_API(int, ncclLLA2ACalcSlots, int maxElts, int maxEltSize) {
  (void)maxEltSize;
  return maxElts;
}
NCCLSIM_API(ncclResult_t, ncclLLA2ACreateRequirement, int nBlocks, int nSlots, OpaqueHandle* outHandle,
            DevResourceRequirements* outReq) {
  (void)nBlocks, (void)nSlots, (void)outHandle, (void)outReq;
  return Refuse("ncclLLA2ACreateRequirement");
}
