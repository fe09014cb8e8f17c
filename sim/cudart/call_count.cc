#include "call_count.h"

#include "export.h"

NCCLSIM_EXPORT void ncclsim_rt_count_call(void) { ncclsim::CountCall(); }
NCCLSIM_EXPORT uint64_t ncclsim_rt_calls_by_this_thread(void) { return ncclsim::calls_by_this_thread; }
