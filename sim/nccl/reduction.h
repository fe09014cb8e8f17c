// Element sizes and element-wise reductions for every ncclDataType_t and built-in
// ncclRedOp_t. Half, bfloat16 and fp8 are computed in float and rounded once at the end.
#ifndef NCCLWATCH_SIM_NCCL_REDUCTION_H_
#define NCCLWATCH_SIM_NCCL_REDUCTION_H_

#include <nccl.h>

#include <cstddef>

namespace ncclsim {

// 0 for a value outside the enum.
size_t DataTypeSize(ncclDataType_t type);
bool IsBuiltinRedOp(ncclRedOp_t op);

// out[i] = op over k of inputs[k][i], k in [0, ninputs), folded in input order so every
// rank computes bit-identical results. Avg divides the sum by ninputs. out may alias an input.
void ReduceInto(void* out, const void* const* inputs, int ninputs, size_t count,
                ncclDataType_t type, ncclRedOp_t op);

// out[i] = in[i] * *scalar (scalar: one element of `type`), integers wrapping. out may alias in.
void ScaleInto(void* out, const void* in, size_t count, ncclDataType_t type, const void* scalar);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_REDUCTION_H_
