// Host-side device-API entry points (nccl_device/*.h). Device-initiated traffic cannot
// exist without a GPU, so these refuse (or return neutral values) with a clear message.
// The device headers need nvcc, so the few types used here are mirrored by layout.
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "comm.h"
#include "export.h"
#include "last_error.h"
#include "nccl_api_232.h"

namespace v232 = ncclsim::v232;

namespace {

using Team = v232::ncclTeam;
struct DevComm;
struct DevCommRequirements;
struct DevResourceRequirements;
struct OpaqueHandle;

ncclResult_t Refuse(const char* api) {
  ncclsim::SetLastError(std::string(api) + ": the NCCL device API is not implemented by the sim");
  return ncclInvalidUsage;
}

// What real NCCL answers when the hardware lacks symmetric memory (no NVLink peers, no NVLS).
ncclResult_t Unavailable(const char* api, const void* window) {
  if (window == nullptr) {
    ncclsim::SetLastError(std::string(api) + ": window argument is NULL");
    return ncclInvalidArgument;
  }
  ncclsim::SetLastError(std::string(api) + ": symmetric device memory is unavailable (no GPU, no NVLink or NVLS)");
  return ncclInvalidUsage;
}

v232::ncclCommProperties_t PropertiesOf(ncclComm_t comm) {
  v232::ncclCommProperties_t p{};
  p.rank = comm->rank;
  p.nRanks = comm->nranks;
  p.cudaDev = comm->device;
  p.nvmlDev = comm->device;
  p.deviceApiSupport = false;
  p.multimemSupport = false;
  p.ginType = v232::NCCL_GIN_TYPE_NONE;
  p.nLsaTeams = 1;
  p.hostRmaSupport = true;  // ncclPutSignal/ncclSignal/ncclWaitSignal work
  p.railedGinType = v232::NCCL_GIN_TYPE_NONE;
  p.commHash = comm->hash;
  p.ginConnectionType = v232::NCCL_GIN_CONNECTION_NONE;
  return p;
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

NCCLSIM_API(ncclResult_t, ncclCommQueryProperties, ncclComm_t comm, v232::ncclCommProperties_t* props) {
  constexpr size_t kHeader = offsetof(v232::ncclCommProperties_t, rank);
  if (comm == nullptr || props == nullptr) {
    ncclsim::SetLastError("ncclCommQueryProperties: comm or props argument is NULL");
    return ncclInvalidArgument;
  }
  if (props->magic != v232::kApiMagic || props->size < kHeader) {
    ncclsim::SetLastError("ncclCommQueryProperties: props not initialized with NCCL_COMM_PROPERTIES_INITIALIZER");
    return ncclInvalidArgument;
  }
  // An older caller's struct is a prefix of ours: fill only the bytes it has.
  const v232::ncclCommProperties_t full = PropertiesOf(comm);
  const size_t bytes = std::min(props->size, sizeof full);
  std::memcpy(reinterpret_cast<char*>(props) + kHeader, reinterpret_cast<const char*>(&full) + kHeader,
              bytes - kHeader);
  return ncclSuccess;
}
NCCLSIM_API(ncclResult_t, ncclGetLsaMultimemDevicePointer, ncclWindow_t window, size_t offset, void** outPtr) {
  (void)offset, (void)outPtr;
  return Unavailable("ncclGetLsaMultimemDevicePointer", window);
}
NCCLSIM_API(ncclResult_t, ncclGetMultimemDevicePointer, ncclWindow_t window, size_t offset,
            v232::ncclMultimemHandle_t multimem, void** outPtr) {
  (void)offset, (void)multimem, (void)outPtr;
  return Unavailable("ncclGetMultimemDevicePointer", window);
}
NCCLSIM_API(ncclResult_t, ncclGetLsaDevicePointer, ncclWindow_t window, size_t offset, int lsaRank, void** outPtr) {
  (void)offset, (void)lsaRank, (void)outPtr;
  return Unavailable("ncclGetLsaDevicePointer", window);
}
NCCLSIM_API(ncclResult_t, ncclGetPeerDevicePointer, ncclWindow_t window, size_t offset, int peer, void** outPtr) {
  (void)offset, (void)peer, (void)outPtr;
  return Unavailable("ncclGetPeerDevicePointer", window);
}
NCCLSIM_API(ncclResult_t, ncclGetMultimemDeviceLeInfo, ncclWindow_t window, size_t offset, v232::ncclCftLeId* leId,
            size_t* leOffset) {
  (void)offset, (void)leId, (void)leOffset;
  return Unavailable("ncclGetMultimemDeviceLeInfo", window);
}
NCCLSIM_API(ncclResult_t, ncclGetCftDeviceLeInfo, ncclWindow_t window, size_t offset, int peerCft, Team cftTeam,
            v232::ncclCftLeId* leId, size_t* leOffset) {
  (void)offset, (void)peerCft, (void)cftTeam, (void)leId, (void)leOffset;
  return Unavailable("ncclGetCftDeviceLeInfo", window);
}
NCCLSIM_API(ncclResult_t, ncclGetPeerDeviceLeInfo, ncclWindow_t window, size_t offset, int peerWorld,
            v232::ncclCftLeId* leId, size_t* leOffset) {
  (void)offset, (void)peerWorld, (void)leId, (void)leOffset;
  return Unavailable("ncclGetPeerDeviceLeInfo", window);
}
// Without a copy-engine fabric (CFT) the team is the rank alone.
NCCLSIM_API(Team, ncclTeamCft, ncclComm_t comm, v232::ncclCftTeamMode_t mode) {
  (void)mode;
  return Team{1, 0, comm != nullptr ? comm->nranks : 1};
}
NCCLSIM_API(Team, ncclTeamCftMultimem, ncclComm_t comm) {
  return Team{1, 0, comm != nullptr ? comm->nranks : 1};
}
NCCLSIM_API(ncclResult_t, ncclCftBarrierCreateRequirement, Team team, int nBarriers,
            v232::ncclCftBarrierHandle_t* outHandle, v232::ncclDevResourceRequirements_t* outReq) {
  (void)team, (void)nBarriers, (void)outHandle, (void)outReq;
  return Refuse("ncclCftBarrierCreateRequirement");
}
NCCLSIM_API(ncclResult_t, ncclGinOutboxCreateRequirement, int nBlocks, int size_log2,
            v232::ncclGinOutboxHandle* outHandle, v232::ncclDevResourceRequirements* outReq) {
  (void)nBlocks, (void)size_log2, (void)outHandle, (void)outReq;
  return Refuse("ncclGinOutboxCreateRequirement");
}
NCCLSIM_API(ncclResult_t, ncclGinInboxA2ACreateRequirement, Team peers, int nBlocks, int size_log2,
            v232::ncclGinInboxA2AHandle* outHandle, v232::ncclDevResourceRequirements* outReq) {
  (void)peers, (void)nBlocks, (void)size_log2, (void)outHandle, (void)outReq;
  return Refuse("ncclGinInboxA2ACreateRequirement");
}
