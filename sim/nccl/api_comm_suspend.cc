// ncclCommSuspend, ncclCommResume and ncclCommMemStats (NCCL 2.29). The sim's "GPU memory" of
// a communicator is its shared segment: the control part persists, the staging buffers are
// what NCCL_SUSPEND_MEM releases. A suspended communicator refuses new work (ncclInvalidUsage).
#include <cstdint>
#include <string>

#include "comm.h"
#include "export.h"
#include "last_error.h"
#include "launch.h"
#include "nccl_api_232.h"
#include "shared_state.h"

using ncclsim::SetLastError;
namespace v232 = ncclsim::v232;

namespace {

ncclResult_t Fail(ncclResult_t code, const std::string& message) {
  SetLastError(message);
  return code;
}

uint64_t PersistentBytes(ncclComm_t comm) { return ncclsim::SegmentLayout(comm->nranks).StageOffset(); }

uint64_t SuspendableBytes(ncclComm_t comm) {
  if (comm->suspended.load() && (comm->suspend_flags.load() & v232::kSuspendMem) != 0) return 0;
  const ncclsim::SegmentLayout layout(comm->nranks);
  return layout.TotalBytes() - layout.StageOffset();
}

}  // namespace

NCCLSIM_API(ncclResult_t, ncclCommSuspend, ncclComm_t comm, int flags) {
  if (comm == nullptr) return Fail(ncclInvalidArgument, "ncclCommSuspend: comm argument is NULL");
  if ((flags & ~v232::kSuspendMem) != 0)
    return Fail(ncclInvalidArgument, "ncclCommSuspend: unknown flags " + std::to_string(flags));
  if (comm->init_state.load() != ncclSuccess)
    return Fail(ncclInvalidUsage, "ncclCommSuspend: communicator is not initialized");
  if (comm->suspended.load()) return Fail(ncclInvalidUsage, "ncclCommSuspend: communicator is already suspended");
  ncclsim::WaitIdle(comm);  // resources go away only after the work that uses them
  comm->suspend_flags.store(flags);
  comm->suspended.store(true);
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommResume, ncclComm_t comm) {
  if (comm == nullptr) return Fail(ncclInvalidArgument, "ncclCommResume: comm argument is NULL");
  if (!comm->suspended.load()) return Fail(ncclInvalidUsage, "ncclCommResume: communicator is not suspended");
  comm->suspended.store(false);
  comm->suspend_flags.store(0);
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommMemStats, ncclComm_t comm, v232::ncclCommMemStat_t stat, uint64_t* value) {
  if (comm == nullptr || value == nullptr)
    return Fail(ncclInvalidArgument, "ncclCommMemStats: comm or value argument is NULL");
  switch (stat) {
    case v232::ncclStatGpuMemSuspend: *value = SuspendableBytes(comm); return ncclSuccess;
    case v232::ncclStatGpuMemSuspended: *value = comm->suspended.load() ? 1 : 0; return ncclSuccess;
    case v232::ncclStatGpuMemPersist: *value = PersistentBytes(comm); return ncclSuccess;
    case v232::ncclStatGpuMemTotal: *value = PersistentBytes(comm) + SuspendableBytes(comm); return ncclSuccess;
  }
  return Fail(ncclInvalidArgument, "ncclCommMemStats: invalid stat " + std::to_string(static_cast<int>(stat)));
}
