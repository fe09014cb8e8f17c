// Primary contexts and the per-thread context stack.
//
// A primary context is active while retained at least once (cuDevicePrimaryCtxRetain); Reset makes
// it inactive whatever the count. A context on a thread's stack is current for that thread only.
#include <mutex>
#include <vector>

#include "context.h"
#include "runtime_link.h"

namespace ncclsim::driver {
namespace {

struct PrimaryState {
  CUctx_st context;
  int retained = 0;
  unsigned flags = 0;
};

class Primaries {
 public:
  static Primaries& Get() {
    static Primaries* instance = new Primaries();  // never destroyed: handles outlive exit
    return *instance;
  }
  PrimaryState& of(CUdevice device) { return states_[static_cast<size_t>(device)]; }
  std::mutex& mu() { return mu_; }
  bool Contains(CUcontext c) const {
    return !states_.empty() && c >= &states_.front().context && c <= &states_.back().context;
  }

 private:
  Primaries() : states_(static_cast<size_t>(rt::DeviceCount())) {
    for (size_t d = 0; d < states_.size(); ++d) states_[d].context.device = static_cast<CUdevice>(d);
  }
  std::mutex mu_;
  std::vector<PrimaryState> states_;  // sized once; elements never move
};

thread_local std::vector<CUcontext> context_stack;

CUresult CheckContext(CUcontext context) {
  return context != nullptr && IsContext(context) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult Release(CUdevice device) {
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  std::lock_guard lock(Primaries::Get().mu());
  PrimaryState& state = Primaries::Get().of(device);
  if (state.retained == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --state.retained;
  return CUDA_SUCCESS;
}

CUresult SetFlags(CUdevice device, unsigned flags) {
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  constexpr unsigned kKnown = CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
                              CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS;
  if ((flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(Primaries::Get().mu());
  Primaries::Get().of(device).flags = flags;
  return CUDA_SUCCESS;
}

// Reset destroys the context's resources in CUDA; the sim only waits for the device's work.
CUresult Reset(CUdevice device) {
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  if (CUresult r = rt::DeviceSynchronize(device); r != CUDA_SUCCESS) return r;
  std::lock_guard lock(Primaries::Get().mu());
  Primaries::Get().of(device).retained = 0;
  Primaries::Get().of(device).flags = 0;
  return CUDA_SUCCESS;
}

CUresult Pop(CUcontext* popped) {
  if (context_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (popped != nullptr) *popped = context_stack.back();
  context_stack.pop_back();
  return CUDA_SUCCESS;
}

CUresult Synchronize(CUcontext context) {
  if (context == nullptr) context = CurrentContext();
  if (CUresult r = CheckContext(context); r != CUDA_SUCCESS) return r;
  return rt::DeviceSynchronize(context->device);
}

}  // namespace

CUcontext PrimaryContext(CUdevice device) { return &Primaries::Get().of(device).context; }
bool IsContext(CUcontext context) { return Primaries::Get().Contains(context); }
CUcontext CurrentContext() { return context_stack.empty() ? nullptr : context_stack.back(); }

}  // namespace ncclsim::driver

namespace drv = ncclsim::driver;

NCCLSIM_DRIVER_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  drv::rt::CountCall();
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = drv::CheckDevice(device); r != CUDA_SUCCESS) return r;
  std::lock_guard lock(drv::Primaries::Get().mu());
  ++drv::Primaries::Get().of(device).retained;
  *context = drv::PrimaryContext(device);
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice device) { return drv::Release(device); }
NCCLSIM_DRIVER_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) { return drv::Release(device); }
NCCLSIM_DRIVER_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice device, unsigned int* flags, int* active) {
  if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = drv::CheckDevice(device); r != CUDA_SUCCESS) return r;
  std::lock_guard lock(drv::Primaries::Get().mu());
  *flags = drv::Primaries::Get().of(device).flags;
  *active = drv::Primaries::Get().of(device).retained > 0 ? 1 : 0;
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice device, unsigned int flags) {
  return drv::SetFlags(device, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice device, unsigned int flags) {
  return drv::SetFlags(device, flags);
}
NCCLSIM_DRIVER_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice device) { return drv::Reset(device); }
NCCLSIM_DRIVER_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice device) { return drv::Reset(device); }

NCCLSIM_DRIVER_EXPORT CUresult cuCtxGetCurrent(CUcontext* context) {
  drv::rt::CountCall();
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *context = drv::CurrentContext();
  return CUDA_SUCCESS;
}
// Replaces the top of the stack; null unbinds it.
NCCLSIM_DRIVER_EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  drv::rt::CountCall();
  if (context != nullptr && !drv::IsContext(context)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!drv::context_stack.empty()) drv::context_stack.pop_back();
  if (context != nullptr) drv::context_stack.push_back(context);
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext context) {
  drv::rt::CountCall();
  if (CUresult r = drv::CheckContext(context); r != CUDA_SUCCESS) return r;
  drv::context_stack.push_back(context);
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuCtxPushCurrent(CUcontext context) { return cuCtxPushCurrent_v2(context); }
NCCLSIM_DRIVER_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* context) {
  drv::rt::CountCall();
  return drv::Pop(context);
}
NCCLSIM_DRIVER_EXPORT CUresult cuCtxPopCurrent(CUcontext* context) {
  drv::rt::CountCall();
  return drv::Pop(context);
}
NCCLSIM_DRIVER_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUcontext current = drv::CurrentContext();
  if (current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  *device = current->device;
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuCtxSynchronize() { return drv::Synchronize(nullptr); }
NCCLSIM_DRIVER_EXPORT CUresult cuCtxSynchronize_v2(CUcontext context) { return drv::Synchronize(context); }
NCCLSIM_DRIVER_EXPORT CUresult cuCtxGetApiVersion(CUcontext context, unsigned int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (context == nullptr) context = drv::CurrentContext();
  if (CUresult r = drv::CheckContext(context); r != CUDA_SUCCESS) return r;
  *version = 3020;  // every context since CUDA 3.2 reports 3020
  return CUDA_SUCCESS;
}
NCCLSIM_DRIVER_EXPORT CUresult cuCtxGetFlags(unsigned int* flags) {
  if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUcontext current = drv::CurrentContext();
  if (current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(drv::Primaries::Get().mu());
  *flags = drv::Primaries::Get().of(current->device).flags;
  return CUDA_SUCCESS;
}
