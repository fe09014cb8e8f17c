// Per-call host time of the hooked entry points. Run it twice, with and without
// LD_PRELOAD=libncclwatch.so, over the sim in no-op mode (NCCLSIM_NOOP=1) so that the
// difference is the hook alone: run_hook_overhead.sh does exactly that.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

constexpr int kBatches = 200;
// Fewer calls per batch than the preload's event pool holds, with an untimed pause
// between batches in which its tracker drains completed events: the steady state of a
// training step rather than an endless burst.
constexpr int kCallsPerBatch = 256;

template <typename Call>
double MedianNsPerCall(Call&& call) {
  std::vector<double> per_call;
  for (int b = 0; b < kBatches; ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCallsPerBatch; ++i) call();
    const auto stop = std::chrono::steady_clock::now();
    per_call.push_back(std::chrono::duration<double, std::nano>(stop - start).count() / kCallsPerBatch);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace

int main() {
  ncclUniqueId id;
  ncclComm_t comm;
  cudaStream_t stream;
  float* buffer;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess ||
      cudaStreamCreate(&stream) != cudaSuccess || cudaMalloc(reinterpret_cast<void**>(&buffer), 1024) != cudaSuccess) {
    std::fprintf(stderr, "setup failed\n");
    return 1;
  }
  const double allreduce = MedianNsPerCall([&] { ncclAllReduce(buffer, buffer, 256, ncclFloat, ncclSum, comm, stream); });
  cudaStreamSynchronize(stream);
  const double sync = MedianNsPerCall([&] { cudaStreamSynchronize(stream); });
  // What the hook spends inside the CUDA runtime per tracked op (the same three calls),
  // to tell the runtime's share of the added time from the hook's own.
  cudaEvent_t event;
  cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  const double runtime_calls = MedianNsPerCall([&] {
    cudaStreamCaptureStatus status;
    cudaPeekAtLastError();
    cudaStreamIsCapturing(stream, &status);
    cudaEventRecord(event, stream);
  });
  std::printf("ncclAllReduce_ns %.1f\ncudaStreamSynchronize_ns %.1f\nevent_calls_ns %.1f\n", allreduce, sync,
              runtime_calls);
  ncclCommDestroy(comm);
  return 0;
}
