// Contexts: one primary context per device (the only kind the sim creates) and the calling
// thread's stack of current contexts.
#ifndef NCCLWATCH_SIM_DRIVER_CONTEXT_H_
#define NCCLWATCH_SIM_DRIVER_CONTEXT_H_

#include "driver_api.h"

// The driver defines its own opaque context type. Never freed: a CUcontext stays a valid pointer
// for the life of the process, as a primary context's handle does in CUDA.
struct CUctx_st {
  CUdevice device;
};

namespace ncclsim::driver {

// The primary context of `device` (which must be valid); its handle never changes.
CUcontext PrimaryContext(CUdevice device);
// True if `context` is a handle this library handed out.
bool IsContext(CUcontext context);
// The calling thread's current context, or null.
CUcontext CurrentContext();

}  // namespace ncclsim::driver

#endif  // NCCLWATCH_SIM_DRIVER_CONTEXT_H_
