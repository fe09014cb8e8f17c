// Communicator lifecycle entry points.
#include <nccl.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <fcntl.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "comm_hash.h"
#include "comm_init.h"
#include "export.h"
#include "last_error.h"
#include "launch.h"

using ncclsim::SetLastError;

namespace {

ncclResult_t CheckComm(ncclComm_t comm, const char* api) {
  if (comm == nullptr) {
    SetLastError(std::string(api) + ": comm argument is NULL");
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

ncclsim::InitRequest RootRequest(const ncclUniqueId& id, int nranks, int rank, ncclConfig_t* config,
                                 const char* api) {
  return ncclsim::InitRequest{ncclsim::HashUniqueId(id.internal, NCCL_UNIQUE_ID_BYTES), nranks,
                              rank, config, api, ""};
}

}  // namespace

NCCLSIM_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId* uniqueId) {
  return ncclsim::NewUniqueId(uniqueId, "ncclGetUniqueId");
}

NCCLSIM_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t* comm, int nranks, ncclUniqueId commId,
            int rank, ncclConfig_t* config) {
  return ncclsim::StartCommInit(RootRequest(commId, nranks, rank, config, "ncclCommInitRankConfig"), comm);
}

NCCLSIM_API(ncclResult_t, ncclCommInitRank, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return ncclsim::StartCommInit(RootRequest(commId, nranks, rank, nullptr, "ncclCommInitRank"), comm);
}

NCCLSIM_API(ncclResult_t, ncclCommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank, int nId,
            ncclUniqueId* commIds, ncclConfig_t* config) {
  if (nId < 1 || commIds == nullptr) {
    SetLastError("ncclCommInitRankScalable: needs at least one unique id");
    return ncclInvalidArgument;
  }
  return ncclsim::StartCommInit(
      RootRequest(commIds[0], nranks, myrank, config, "ncclCommInitRankScalable"), newcomm);
}

NCCLSIM_API(ncclResult_t, ncclCommInitAll, ncclComm_t* comms, int ndev, const int* devlist) {
  if (comms == nullptr || ndev < 1) {
    SetLastError("ncclCommInitAll: invalid comms or ndev");
    return ncclInvalidArgument;
  }
  ncclUniqueId id;
  // Through the PLT like real NCCL, so an interposer sees it.
  ncclResult_t r = ncclGetUniqueId(&id);
  if (r != ncclSuccess) return r;
  std::vector<ncclResult_t> results(ndev, ncclSuccess);
  std::vector<std::thread> threads;
  for (int i = 0; i < ndev; ++i) {
    threads.emplace_back([&, i] {
      cudaSetDevice(devlist != nullptr ? devlist[i] : i);
      results[i] = ncclsim::StartCommInit(RootRequest(id, ndev, i, nullptr, "ncclCommInitAll"), &comms[i]);
    });
  }
  for (auto& t : threads) t.join();
  for (ncclResult_t res : results)
    if (res != ncclSuccess) return res;
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
            ncclConfig_t* config) {
  if (ncclResult_t r = CheckComm(comm, "ncclCommSplit"); r != ncclSuccess) return r;
  if (newcomm == nullptr) {
    SetLastError("ncclCommSplit: newcomm argument is NULL");
    return ncclInvalidArgument;
  }
  *newcomm = nullptr;
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR) {
    SetLastError("ncclCommSplit: color must be non-negative or NCCL_SPLIT_NOCOLOR");
    return ncclInvalidArgument;
  }
  const int split_count = ++comm->split_count;
  const int32_t mine[2] = {color, key};
  std::vector<std::array<int32_t, 2>> all;
  if (!ncclsim::BootAllGather(comm, mine, &all)) {
    SetLastError("ncclCommSplit: parent communicator aborted");
    return ncclInvalidUsage;
  }
  if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
  std::vector<std::pair<int, int>> members;  // (key, parent rank)
  for (int r = 0; r < comm->nranks; ++r)
    if (all[r][0] == color) members.push_back({all[r][1], r});
  std::sort(members.begin(), members.end());
  int child_rank = 0;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i].second == comm->rank) child_rank = static_cast<int>(i);
  char extra[128];
  std::snprintf(extra, sizeof extra, " parent %p splitCount %d color %d key %d",
                static_cast<void*>(comm), split_count, color, key);
  ncclConfig_t inherited = NCCL_CONFIG_INITIALIZER;
  inherited.blocking = comm->blocking ? 1 : 0;
  return ncclsim::StartCommInit(
      ncclsim::InitRequest{ncclsim::HashSplitChild(comm->hash, split_count, color),
                           static_cast<int>(members.size()), child_rank,
                           config != nullptr ? config : &inherited, "ncclCommSplit", extra},
      newcomm);
}

NCCLSIM_API(ncclResult_t, ncclCommShrink, ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
            ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  (void)shrinkFlags;
  if (ncclResult_t r = CheckComm(comm, "ncclCommShrink"); r != ncclSuccess) return r;
  if (newcomm == nullptr || (excludeRanksCount > 0 && excludeRanksList == nullptr)) {
    SetLastError("ncclCommShrink: invalid newcomm or exclude list");
    return ncclInvalidArgument;
  }
  *newcomm = nullptr;
  std::vector<bool> excluded(comm->nranks, false);
  for (int i = 0; i < excludeRanksCount; ++i) {
    if (excludeRanksList[i] < 0 || excludeRanksList[i] >= comm->nranks) {
      SetLastError("ncclCommShrink: excluded rank out of range");
      return ncclInvalidArgument;
    }
    excluded[excludeRanksList[i]] = true;
  }
  if (excluded[comm->rank]) return ncclSuccess;
  int nranks = 0, rank = 0;
  for (int r = 0; r < comm->nranks; ++r) {
    if (excluded[r]) continue;
    if (r == comm->rank) rank = nranks;
    ++nranks;
  }
  ncclConfig_t inherited = NCCL_CONFIG_INITIALIZER;
  inherited.blocking = comm->blocking ? 1 : 0;
  return ncclsim::StartCommInit(
      ncclsim::InitRequest{ncclsim::HashSplitChild(comm->hash, 0, 0), nranks, rank,
                           config != nullptr ? config : &inherited, "ncclCommShrink", ""},
      newcomm);
}

NCCLSIM_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm) {
  if (ncclResult_t r = CheckComm(comm, "ncclCommFinalize"); r != ncclSuccess) return r;
  ncclsim::WaitIdle(comm);
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  // A comm still waiting for its peers cannot be drained: give up on it like Abort.
  if (comm->init_state.load() != ncclSuccess) return ncclCommAbort(comm);
  ncclsim::ReleaseComm(comm);
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommAbort, ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  comm->aborted.store(true);
  comm->async_error.store(ncclRemoteError);
  if (comm->segment->header() != nullptr) ncclsim::Ring(comm, comm->rank);
  {
    std::lock_guard<std::mutex> lock(comm->mu);  // wakes ops waiting for their turn
    comm->cv.notify_all();
  }
  comm->segment->Unlink();
  ncclsim::ReleaseComm(comm);
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommRevoke, ncclComm_t comm, int revokeFlags) {
  if (ncclResult_t r = CheckComm(comm, "ncclCommRevoke"); r != ncclSuccess) return r;
  if (revokeFlags != NCCL_REVOKE_DEFAULT) {
    SetLastError("ncclCommRevoke: revokeFlags must be NCCL_REVOKE_DEFAULT");
    return ncclInvalidArgument;
  }
  comm->revoked.store(true);
  comm->aborted.store(true);
  if (comm->segment->header() != nullptr) ncclsim::Ring(comm, comm->rank);
  {
    std::lock_guard<std::mutex> lock(comm->mu);
    comm->cv.notify_all();
  }
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError) {
  if (ncclResult_t r = CheckComm(comm, "ncclCommGetAsyncError"); r != ncclSuccess) return r;
  if (asyncError == nullptr) {
    SetLastError("ncclCommGetAsyncError: asyncError argument is NULL");
    return ncclInvalidArgument;
  }
  const ncclResult_t init = comm->init_state.load();
  if (init != ncclSuccess) {
    *asyncError = init;
    return ncclSuccess;
  }
  {
    std::lock_guard<std::mutex> lock(comm->mu);
    if (comm->pending_enqueue > 0) {
      *asyncError = ncclInProgress;
      return ncclSuccess;
    }
  }
  *asyncError = comm->async_error.load();
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int* count) {
  if (ncclResult_t r = CheckComm(comm, "ncclCommCount"); r != ncclSuccess) return r;
  if (count == nullptr) return ncclInvalidArgument;
  *count = comm->nranks;
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int* device) {
  if (ncclResult_t r = CheckComm(comm, "ncclCommCuDevice"); r != ncclSuccess) return r;
  if (device == nullptr) return ncclInvalidArgument;
  *device = comm->device;
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int* rank) {
  if (ncclResult_t r = CheckComm(comm, "ncclCommUserRank"); r != ncclSuccess) return r;
  if (rank == nullptr) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}
