#include "typed_values.h"

#include <algorithm>
#include <cmath>

namespace simtest {

size_t TypeSize(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
  }
}

bool IsIntegerType(ncclDataType_t t) { return t <= ncclUint64; }

void StoreValue(void* buf, size_t i, ncclDataType_t t, double v) {
  switch (t) {
    case ncclInt8: static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(v); break;
    case ncclUint8: static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(v); break;
    case ncclInt32: static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v); break;
    case ncclUint32: static_cast<uint32_t*>(buf)[i] = static_cast<uint32_t>(v); break;
    case ncclInt64: static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v); break;
    case ncclUint64: static_cast<uint64_t*>(buf)[i] = static_cast<uint64_t>(v); break;
    case ncclFloat16: static_cast<__half*>(buf)[i] = __float2half(static_cast<float>(v)); break;
    case ncclFloat32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case ncclFloat64: static_cast<double*>(buf)[i] = v; break;
    case ncclBfloat16: static_cast<__nv_bfloat16*>(buf)[i] = __float2bfloat16(static_cast<float>(v)); break;
    case ncclFloat8e4m3: static_cast<__nv_fp8_e4m3*>(buf)[i] = __nv_fp8_e4m3(static_cast<float>(v)); break;
    case ncclFloat8e5m2: static_cast<__nv_fp8_e5m2*>(buf)[i] = __nv_fp8_e5m2(static_cast<float>(v)); break;
    default: break;
  }
}

double LoadValue(const void* buf, size_t i, ncclDataType_t t) {
  switch (t) {
    case ncclInt8: return static_cast<const int8_t*>(buf)[i];
    case ncclUint8: return static_cast<const uint8_t*>(buf)[i];
    case ncclInt32: return static_cast<const int32_t*>(buf)[i];
    case ncclUint32: return static_cast<const uint32_t*>(buf)[i];
    case ncclInt64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case ncclUint64: return static_cast<double>(static_cast<const uint64_t*>(buf)[i]);
    case ncclFloat16: return __half2float(static_cast<const __half*>(buf)[i]);
    case ncclFloat32: return static_cast<const float*>(buf)[i];
    case ncclFloat64: return static_cast<const double*>(buf)[i];
    case ncclBfloat16: return __bfloat162float(static_cast<const __nv_bfloat16*>(buf)[i]);
    case ncclFloat8e4m3: return float(static_cast<const __nv_fp8_e4m3*>(buf)[i]);
    case ncclFloat8e5m2: return float(static_cast<const __nv_fp8_e5m2*>(buf)[i]);
    default: return NAN;
  }
}

double ExpectedReduction(ncclRedOp_t op, ncclDataType_t t, int nranks, size_t i) {
  double acc = InputValue(0, i);
  for (int r = 1; r < nranks; ++r) {
    const double v = InputValue(r, i);
    switch (op) {
      case ncclProd: acc *= v; break;
      case ncclMax: acc = std::max(acc, v); break;
      case ncclMin: acc = std::min(acc, v); break;
      default: acc += v; break;
    }
  }
  if (op == ncclAvg) acc = IsIntegerType(t) ? std::floor(acc / nranks) : acc / nranks;
  return acc;
}

}  // namespace simtest
