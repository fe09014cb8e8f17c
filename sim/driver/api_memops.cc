// Stream memory operations: cuStreamWriteValue32/64, cuStreamWaitValue32/64, cuStreamBatchMemOp.
//
// Each call enqueues one host function on the runtime's stream, so the operation happens in stream
// order. A wait really blocks its stream (and only its stream) until the condition holds: it polls
// the word, sleeping 20 us doubling up to 1 ms between looks, so a long wait costs ~1000 wake-ups
// per second at most, and a write from another stream is seen within 1 ms.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "driver_api.h"
#include "runtime_link.h"

namespace ncclsim::driver {
namespace {

template <typename T>
T Load(CUdeviceptr address) {
  return std::atomic_ref<T>(*reinterpret_cast<T*>(address)).load(std::memory_order_acquire);
}

template <typename T>
void Store(CUdeviceptr address, T value) {
  std::atomic_ref<T>(*reinterpret_cast<T*>(address)).store(value, std::memory_order_release);
}

// The condition of CU_STREAM_WAIT_VALUE_* on the current value; GEQ compares cyclically, as in CUDA.
template <typename T>
bool Satisfied(T current, T value, unsigned flags) {
  using Signed = std::make_signed_t<T>;
  switch (flags & ~unsigned{CU_STREAM_WAIT_VALUE_FLUSH}) {
    case CU_STREAM_WAIT_VALUE_GEQ: return static_cast<Signed>(current - value) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return current == value;
    case CU_STREAM_WAIT_VALUE_AND: return (current & value) != 0;
    case CU_STREAM_WAIT_VALUE_NOR: return static_cast<T>(~(current | value)) != 0;
    default: return true;  // rejected before enqueueing
  }
}

template <typename T>
void WaitUntil(CUdeviceptr address, T value, unsigned flags) {
  long sleep_ns = 20'000;
  while (!Satisfied<T>(Load<T>(address), value, flags)) {
    timespec ts{0, sleep_ns};
    nanosleep(&ts, nullptr);
    sleep_ns = std::min(sleep_ns * 2, 1'000'000L);
  }
}

void Run(const CUstreamBatchMemOpParams& op) {
  switch (op.operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      WaitUntil<uint32_t>(op.waitValue.address, op.waitValue.value, op.waitValue.flags);
      break;
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      WaitUntil<uint64_t>(op.waitValue.address, op.waitValue.value64, op.waitValue.flags);
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32: Store<uint32_t>(op.writeValue.address, op.writeValue.value); break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_64: Store<uint64_t>(op.writeValue.address, op.writeValue.value64); break;
    default: std::atomic_thread_fence(std::memory_order_seq_cst); break;  // barrier, flush
  }
}



bool AddressOk(CUdeviceptr address, size_t width) { return address != 0 && address % width == 0; }

CUresult Check(const CUstreamBatchMemOpParams& op) {
  constexpr unsigned kWaitConditions = 0x3;
  switch (op.operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64: {
      const size_t width = op.operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ? 4 : 8;
      const unsigned unknown = op.waitValue.flags & ~(kWaitConditions | CU_STREAM_WAIT_VALUE_FLUSH);
      return AddressOk(op.waitValue.address, width) && unknown == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64: {
      const size_t width = op.operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 ? 4 : 8;
      const unsigned unknown = op.writeValue.flags & ~unsigned{CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER};
      return AddressOk(op.writeValue.address, width) && unknown == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
    case CU_STREAM_MEM_OP_BARRIER: return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult Enqueue(CUstream stream, const CUstreamBatchMemOpParams* ops, unsigned count, unsigned flags) {
  if (count == 0 || ops == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < count; ++i) {
    if (CUresult r = Check(ops[i]); r != CUDA_SUCCESS) return r;
  }
  // A capture records them as one host node (the runtime has no batch memory-op node type).
  return rt::LaunchWork(stream, CU_GRAPH_NODE_TYPE_HOST,
                        [batch = std::vector<CUstreamBatchMemOpParams>(ops, ops + count)] {
                          for (const CUstreamBatchMemOpParams& op : batch) Run(op);
                        });
}

// waitValue and writeValue are distinct structs of one shape; fills either.
template <typename Params>
void Fill(Params* p, CUstreamBatchMemOpType type, CUdeviceptr address, uint64_t value, unsigned flags, bool wide) {
  p->operation = type;
  p->address = address;
  if (wide) {
    p->value64 = value;
  } else {
    p->value = static_cast<cuuint32_t>(value);
  }
  p->flags = flags;
}

CUresult Wait(CUstream stream, CUdeviceptr address, uint64_t value, unsigned flags, bool wide) {
  CUstreamBatchMemOpParams op{};
  Fill(&op.waitValue, wide ? CU_STREAM_MEM_OP_WAIT_VALUE_64 : CU_STREAM_MEM_OP_WAIT_VALUE_32, address, value, flags,
       wide);
  return Enqueue(stream, &op, 1, 0);
}

CUresult Write(CUstream stream, CUdeviceptr address, uint64_t value, unsigned flags, bool wide) {
  CUstreamBatchMemOpParams op{};
  Fill(&op.writeValue, wide ? CU_STREAM_MEM_OP_WRITE_VALUE_64 : CU_STREAM_MEM_OP_WRITE_VALUE_32, address, value,
       flags, wide);
  return Enqueue(stream, &op, 1, 0);
}

}  // namespace
}  // namespace ncclsim::driver

namespace drv = ncclsim::driver;
using drv::PerThread;

// The v1 (CUDA 8.0) and v2 (CUDA 11.7) variants share one prototype; they differ only in how the
// real hardware orders remote writes, which the sim does not have.
#define NCCLSIM_MEMOP(name, impl, type, wide)                                                             \
  NCCLSIM_DRIVER_EXPORT CUresult name(CUstream s, CUdeviceptr a, type v, unsigned int f) {                \
    return drv::impl(s, a, v, f, wide);                                                                   \
  }                                                                                                       \
  NCCLSIM_DRIVER_EXPORT CUresult name##_ptsz(CUstream s, CUdeviceptr a, type v, unsigned int f) {         \
    return drv::impl(PerThread(s), a, v, f, wide);                                                        \
  }
NCCLSIM_MEMOP(cuStreamWaitValue32, Wait, cuuint32_t, false)
NCCLSIM_MEMOP(cuStreamWaitValue32_v2, Wait, cuuint32_t, false)
NCCLSIM_MEMOP(cuStreamWaitValue64, Wait, cuuint64_t, true)
NCCLSIM_MEMOP(cuStreamWaitValue64_v2, Wait, cuuint64_t, true)
NCCLSIM_MEMOP(cuStreamWriteValue32, Write, cuuint32_t, false)
NCCLSIM_MEMOP(cuStreamWriteValue32_v2, Write, cuuint32_t, false)
NCCLSIM_MEMOP(cuStreamWriteValue64, Write, cuuint64_t, true)
NCCLSIM_MEMOP(cuStreamWriteValue64_v2, Write, cuuint64_t, true)
#undef NCCLSIM_MEMOP

#define NCCLSIM_BATCH(name, stream)                                                                        \
  NCCLSIM_DRIVER_EXPORT CUresult name(CUstream s, unsigned int n, CUstreamBatchMemOpParams* p, unsigned f) { \
    return drv::Enqueue(stream, p, n, f);                                                                  \
  }
NCCLSIM_BATCH(cuStreamBatchMemOp, s)
NCCLSIM_BATCH(cuStreamBatchMemOp_ptsz, PerThread(s))
NCCLSIM_BATCH(cuStreamBatchMemOp_v2, s)
NCCLSIM_BATCH(cuStreamBatchMemOp_v2_ptsz, PerThread(s))
#undef NCCLSIM_BATCH
