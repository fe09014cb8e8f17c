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

// Calls f with a default-constructed codec for type (nothing for a type outside the enum).
template <typename F>
void WithCodec(ncclDataType_t type, F&& f) {
  switch (type) {
    case ncclInt8: return f(Codec<int8_t, int8_t>{});
    case ncclUint8: return f(Codec<uint8_t, uint8_t>{});
    case ncclInt32: return f(Codec<int32_t, int32_t>{});
    case ncclUint32: return f(Codec<uint32_t, uint32_t>{});
    case ncclInt64: return f(Codec<int64_t, int64_t>{});
    case ncclUint64: return f(Codec<uint64_t, uint64_t>{});
    case ncclFloat16: return f(HalfCodec{});
    case ncclFloat32: return f(Codec<float, float>{});
    case ncclFloat64: return f(Codec<double, double>{});
    case ncclBfloat16: return f(Bf16Codec{});
    case ncclFloat8e4m3: return f(Fp8Codec<__nv_fp8_e4m3>{});
    case ncclFloat8e5m2: return f(Fp8Codec<__nv_fp8_e5m2>{});
    default: return;
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
  WithCodec(type, [&](auto codec) { ReduceWith<decltype(codec)>(out, in, n, count, op); });
}

void ScaleInto(void* out, const void* in, size_t count, ncclDataType_t type, const void* scalar) {
  WithCodec(type, [&](auto codec) {
    using C = decltype(codec);
    const auto factor = C::Load(scalar, 0);
    for (size_t i = 0; i < count; ++i) C::Store(out, i, Combine(C::Load(in, i), factor, ncclProd));
  });
}

}  // namespace ncclsim
