// Custom reduction operators: ncclRedOpCreatePreMulSum and ncclRedOpDestroy. Ops are per
// communicator; the value handed out is the next unused one from ncclNumOps up, so ranks that
// create ops in the same order agree on the values, as with real NCCL.
#include <algorithm>
#include <cstring>
#include <string>

#include "comm.h"
#include "export.h"
#include "last_error.h"
#include "reduction.h"

using ncclsim::SetLastError;

namespace {

ncclResult_t Invalid(const std::string& message) {
  SetLastError(message);
  return ncclInvalidArgument;
}

}  // namespace

NCCLSIM_API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
            ncclScalarResidence_t residence, ncclComm_t comm) {
  if (comm == nullptr || op == nullptr || scalar == nullptr)
    return Invalid("ncclRedOpCreatePreMulSum: NULL comm, op or scalar argument");
  const size_t size = ncclsim::DataTypeSize(datatype);
  if (size == 0) return Invalid("ncclRedOpCreatePreMulSum: invalid datatype " + std::to_string(datatype));
  if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)
    return Invalid("ncclRedOpCreatePreMulSum: invalid residence " + std::to_string(residence));
  ncclsim::PreMulSum entry{datatype, residence, scalar, {}};
  if (residence == ncclScalarHostImmediate) std::memcpy(entry.host_value, scalar, size);
  std::lock_guard<std::mutex> lock(comm->mu);
  int value = comm->next_redop;
  while (comm->redops.count(value) > 0) ++value;
  comm->redops.emplace(value, entry);
  comm->next_redop = value + 1;
  *op = static_cast<ncclRedOp_t>(value);
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t op, ncclComm_t comm) {
  if (comm == nullptr) return Invalid("ncclRedOpDestroy: comm argument is NULL");
  if (ncclsim::IsBuiltinRedOp(op)) return Invalid("ncclRedOpDestroy: cannot destroy a built-in op");
  std::lock_guard<std::mutex> lock(comm->mu);
  if (comm->redops.erase(op) == 0)
    return Invalid("ncclRedOpDestroy: op " + std::to_string(op) + " was not created on this communicator");
  comm->next_redop = std::min(comm->next_redop, static_cast<int>(op));  // values are reused, lowest first
  return ncclSuccess;
}
