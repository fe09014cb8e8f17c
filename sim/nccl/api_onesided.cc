// One-sided entry points (NCCL 2.29): ncclPutSignal, ncclSignal, ncclWaitSignal. They validate,
// then are recorded or launched like any op; see one_sided.cc for what runs on the stream.
#include <memory>
#include <string>

#include "coll_submit.h"
#include "export.h"
#include "last_error.h"
#include "launch.h"
#include "nccl_api_232.h"
#include "reduction.h"
#include "window.h"

using ncclsim::SetLastError;
using ncclsim::v232::ncclWaitSignalDesc_t;

namespace {

ncclResult_t Invalid(const char* api, const std::string& what) {
  SetLastError(std::string(api) + ": " + what);
  return ncclInvalidArgument;
}

ncclResult_t CheckSignalTarget(const char* api, ncclComm_t comm, int peer, int sig_index, int context) {
  if (peer < 0 || peer >= comm->nranks) return Invalid(api, "peer " + std::to_string(peer) + " out of range");
  if (sig_index < 0 || sig_index >= ncclsim::kSignalIndices)
    return Invalid(api, "sigIdx " + std::to_string(sig_index) + " outside [0, 64)");
  if (context < 0 || context >= ncclsim::kSignalContexts)
    return Invalid(api, "ctx " + std::to_string(context) + " outside [0, 4)");
  return ncclSuccess;
}

ncclResult_t Submit(ncclsim::Op op, std::shared_ptr<ncclsim::OneSidedArgs> args) {
  op.one_sided = std::move(args);
  return ncclsim::SubmitOp(op);
}

ncclResult_t CheckPut(const void* localbuff, size_t count, ncclDataType_t datatype, ncclWindow_t peerWin,
                      size_t offset, ncclComm_t comm) {
  const char* api = "ncclPutSignal";
  if (ncclsim::DataTypeSize(datatype) == 0) return Invalid(api, "invalid datatype " + std::to_string(datatype));
  if (count > 0 && localbuff == nullptr) return Invalid(api, "NULL localbuff");
  if (peerWin == nullptr || peerWin->comm != comm)
    return Invalid(api, "peerWin is NULL or was not registered on this communicator");
  const size_t bytes = count * ncclsim::DataTypeSize(datatype);
  if (offset > peerWin->bytes || bytes > peerWin->bytes - offset)
    return Invalid(api, "peerWinOffset + size exceeds the window");
  return ncclSuccess;
}

}  // namespace

NCCLSIM_API(ncclResult_t, ncclPutSignal, const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
            ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
            cudaStream_t stream) {
  const char* api = "ncclPutSignal";
  if (ncclResult_t r = ncclsim::CheckUsable(comm, api); r != ncclSuccess) return r;
  if (ncclResult_t r = CheckSignalTarget(api, comm, peer, sigIdx, ctx); r != ncclSuccess) return r;
  if (flags != 0) return Invalid(api, "flags must be 0 (reserved)");
  if (ncclResult_t r = CheckPut(localbuff, count, datatype, peerWin, peerWinOffset, comm); r != ncclSuccess)
    return r;
  auto args = std::make_shared<ncclsim::OneSidedArgs>();
  args->window_slot = peerWin->slot;
  args->offset = peerWinOffset;
  args->sig_index = sigIdx;
  args->context = ctx;
  return Submit({ncclsim::CollKind::kPutSignal, comm, stream, localbuff, nullptr, count, datatype, ncclSum, peer},
                std::move(args));
}

NCCLSIM_API(ncclResult_t, ncclSignal, int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
            cudaStream_t stream) {
  const char* api = "ncclSignal";
  if (ncclResult_t r = ncclsim::CheckUsable(comm, api); r != ncclSuccess) return r;
  if (ncclResult_t r = CheckSignalTarget(api, comm, peer, sigIdx, ctx); r != ncclSuccess) return r;
  if (flags != 0) return Invalid(api, "flags must be 0 (reserved)");
  auto args = std::make_shared<ncclsim::OneSidedArgs>();
  args->sig_index = sigIdx;
  args->context = ctx;
  return Submit({ncclsim::CollKind::kSignal, comm, stream, nullptr, nullptr, 0, ncclInt8, ncclSum, peer},
                std::move(args));
}

NCCLSIM_API(ncclResult_t, ncclWaitSignal, int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm,
            cudaStream_t stream) {
  const char* api = "ncclWaitSignal";
  if (ncclResult_t r = ncclsim::CheckUsable(comm, api); r != ncclSuccess) return r;
  if (nDesc < 0 || (nDesc > 0 && signalDescs == nullptr)) return Invalid(api, "bad nDesc or NULL signalDescs");
  auto args = std::make_shared<ncclsim::OneSidedArgs>();
  for (int i = 0; i < nDesc; ++i) {
    const ncclWaitSignalDesc_t& d = signalDescs[i];
    if (ncclResult_t r = CheckSignalTarget(api, comm, d.peer, d.sigIdx, d.ctx); r != ncclSuccess) return r;
    if (d.opCnt < 0) return Invalid(api, "negative opCnt");
    args->waits.push_back(d);
  }
  return Submit({ncclsim::CollKind::kWaitSignal, comm, stream, nullptr, nullptr, 0, ncclInt8, ncclSum, comm->rank},
                std::move(args));
}
