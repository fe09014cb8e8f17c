#include "preload/hooks/keep_errno.h"

namespace ncclwatch::preload::keep_errno_detail {
__thread int* location __attribute__((tls_model("initial-exec"))) = nullptr;

int* RememberThreadErrno() noexcept { return location = &errno; }
}  // namespace ncclwatch::preload::keep_errno_detail
