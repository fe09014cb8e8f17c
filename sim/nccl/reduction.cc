#include "reduction.h"

#include <cstdint>
#include <type_traits>

namespace ncclsim {
namespace {

// Storage type T, arithmetic type Acc.
template <typename T, typename Acc>
struct Codec {
  static Acc Load(const void* p, size_t i) { return static_cast<Acc>(static_cast<const T*>(p)[i]); }
  static void Store(void* p, size_t i, Acc v) { static_cast<T*>(p)[i] = static_cast<T>(v); }
};

struct HalfCodec {
  static float Load(const void* p, size_t i) { return __half2float(static_cast<const __half*>(p)[i]); }
  static void Store(void* p, size_t i, float v) { static_cast<__half*>(p)[i] = __float2half(v); }
};
struct Bf16Codec {
  static float Load(const void* p, size_t i) {
    return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
  }
  static void Store(void* p, size_t i, float v) {
    static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(v);
  }
};
template <typename Fp8>
struct Fp8Codec {
  static float Load(const void* p, size_t i) { return float(static_cast<const Fp8*>(p)[i]); }
  static void Store(void* p, size_t i, float v) { static_cast<Fp8*>(p)[i] = Fp8(v); }
};

// Integer sums and products wrap like the GPU does instead of being undefined.
template <typename Acc>
Acc Combine(Acc a, Acc b, ncclRedOp_t op) {
  switch (op) {
    case ncclSum:
    case ncclAvg:
      if constexpr (std::is_integral_v<Acc>) {
        using U = std::make_unsigned_t<Acc>;
        return static_cast<Acc>(static_cast<U>(a) + static_cast<U>(b));
      } else {
        return a + b;
      }
    case ncclProd:
      if constexpr (std::is_integral_v<Acc>) {
        using U = std::make_unsigned_t<Acc>;
        return static_cast<Acc>(static_cast<U>(a) * static_cast<U>(b));
      } else {
        return a * b;
      }
    case ncclMax: return a < b ? b : a;
    case ncclMin: return b < a ? b : a;
    default: return a;
  }
}

template <typename C>
void ReduceWith(void* out, const void* const* in, int n, size_t count, ncclRedOp_t op) {
  for (size_t i = 0; i < count; ++i) {
    auto acc = C::Load(in[0], i);
    for (int k = 1; k < n; ++k) acc = Combine(acc, C::Load(in[k], i), op);
    if (op == ncclAvg) acc = acc / static_cast<decltype(acc)>(n);
    C::Store(out, i, acc);
  }
}

}  // namespace

size_t DataTypeSize(ncclDataType_t type) {
  switch (type) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
  }
}

bool IsBuiltinRedOp(ncclRedOp_t op) { return op >= ncclSum && op < ncclNumOps; }

void ReduceInto(void* out, const void* const* in, int n, size_t count, ncclDataType_t type,
                ncclRedOp_t op) {
  switch (type) {
    case ncclInt8: return ReduceWith<Codec<int8_t, int8_t>>(out, in, n, count, op);
    case ncclUint8: return ReduceWith<Codec<uint8_t, uint8_t>>(out, in, n, count, op);
    case ncclInt32: return ReduceWith<Codec<int32_t, int32_t>>(out, in, n, count, op);
    case ncclUint32: return ReduceWith<Codec<uint32_t, uint32_t>>(out, in, n, count, op);
    case ncclInt64: return ReduceWith<Codec<int64_t, int64_t>>(out, in, n, count, op);
    case ncclUint64: return ReduceWith<Codec<uint64_t, uint64_t>>(out, in, n, count, op);
    case ncclFloat16: return ReduceWith<HalfCodec>(out, in, n, count, op);
    case ncclFloat32: return ReduceWith<Codec<float, float>>(out, in, n, count, op);
    case ncclFloat64: return ReduceWith<Codec<double, double>>(out, in, n, count, op);
    case ncclBfloat16: return ReduceWith<Bf16Codec>(out, in, n, count, op);
    case ncclFloat8e4m3: return ReduceWith<Fp8Codec<__nv_fp8_e4m3>>(out, in, n, count, op);
    case ncclFloat8e5m2: return ReduceWith<Fp8Codec<__nv_fp8_e5m2>>(out, in, n, count, op);
    default: return;
  }
}

}  // namespace ncclsim
