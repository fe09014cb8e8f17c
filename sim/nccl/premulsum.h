// Reduction operators made by ncclRedOpCreatePreMulSum: each rank multiplies its input by a
// scalar, then the ranks sum. The scalar is read at creation (ncclScalarHostImmediate) or
// each time a collective runs (ncclScalarDevice; the sim's device memory is host memory).
#ifndef NCCLWATCH_SIM_NCCL_PREMULSUM_H_
#define NCCLWATCH_SIM_NCCL_PREMULSUM_H_

#include <nccl.h>

#include <cstring>

namespace ncclsim {

struct PreMulSum {
  ncclDataType_t datatype;
  ncclScalarResidence_t residence;
  const void* device_scalar;       // ncclScalarDevice
  unsigned char host_value[8];     // ncclScalarHostImmediate: copied at creation

  // The scalar's current bytes (one element of datatype).
  const void* Scalar() const { return residence == ncclScalarDevice ? device_scalar : host_value; }
};

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_PREMULSUM_H_
