// Helpers for the cudart sim tests: a gate that host functions block on, and declarations of
// the per-thread entry points that cuda_runtime_api.h only declares under
// CUDA_API_PER_THREAD_DEFAULT_STREAM.
#ifndef NCCLWATCH_TESTS_SIM_CUDART_TEST_SUPPORT_H_
#define NCCLWATCH_TESTS_SIM_CUDART_TEST_SUPPORT_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

extern "C" {
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void* user_data);
cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
}

namespace ncclsim_test {

// Closed until Open(); host functions enqueued with BlockOn() wait on it.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }
  // Host function that blocks until the gate opens.
  static void BlockOn(void* gate) { static_cast<Gate*>(gate)->Wait(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Host function that sets an std::atomic<bool>.
inline void SetFlag(void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); }

}  // namespace ncclsim_test

#endif  // NCCLWATCH_TESTS_SIM_CUDART_TEST_SUPPORT_H_
