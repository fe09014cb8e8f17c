// Test values for every ncclDataType_t, converted through double. Inputs are chosen so
// every reduction of up to 8 ranks is exact even in fp8.
#ifndef NCCLWATCH_TESTS_SIM_NCCL_TYPED_VALUES_H_
#define NCCLWATCH_TESTS_SIM_NCCL_TYPED_VALUES_H_

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace simtest {

size_t TypeSize(ncclDataType_t t);
void StoreValue(void* buf, size_t i, ncclDataType_t t, double v);
double LoadValue(const void* buf, size_t i, ncclDataType_t t);
bool IsIntegerType(ncclDataType_t t);

// Input of `rank` at element i: 1 or 2.
inline double InputValue(int rank, size_t i) { return static_cast<double>(1 + ((rank + i) % 2)); }

// What op over ranks [0, nranks) of InputValue must give at element i.
double ExpectedReduction(ncclRedOp_t op, ncclDataType_t t, int nranks, size_t i);

inline const std::vector<ncclDataType_t>& AllTypes() {
  static const std::vector<ncclDataType_t> all = {
      ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64, ncclFloat16,
      ncclFloat32, ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
  return all;
}

}  // namespace simtest

#endif  // NCCLWATCH_TESTS_SIM_NCCL_TYPED_VALUES_H_
