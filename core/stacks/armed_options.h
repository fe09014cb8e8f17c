// The CaptureOptions the process armed stack capture with. Arming is once per process (one
// signal handler, one set of slots, one unwinder, one symbolizer), so the first options
// given win; the pieces that arm read them here instead of each taking a parameter.
#ifndef NCCLWATCH_CORE_STACKS_ARMED_OPTIONS_H_
#define NCCLWATCH_CORE_STACKS_ARMED_OPTIONS_H_

#include "core/stacks/process_stacks.h"

namespace ncclwatch::stacks_internal {

// Keeps `options` unless options were fixed before. Thread-safe.
void FixArmedOptions(const CaptureOptions& options);

// The fixed options; CaptureOptions{} (and fixed so) when none were given. Thread-safe.
// Not for signal handlers.
const CaptureOptions& ArmedOptions();

}  // namespace ncclwatch::stacks_internal

#endif  // NCCLWATCH_CORE_STACKS_ARMED_OPTIONS_H_
