// The names of a communicator's lifecycle states (facts.h: CommLifecycle), as `status` shows
// them and the dump stores them. Part of the output format; never rename.
#ifndef NCCLWATCH_CORE_DETECT_COMM_LIFECYCLE_H_
#define NCCLWATCH_CORE_DETECT_COMM_LIFECYCLE_H_

#include <optional>
#include <string_view>

#include "core/detect/facts.h"

namespace ncclwatch::detect {

// "initializing", "ready", "suspended", "init-failed", "finalized", "destroyed", "aborted",
// "revoked".
std::string_view ToString(CommLifecycle lifecycle);
// Inverse of ToString; nullopt for any other text.
std::optional<CommLifecycle> ParseCommLifecycle(std::string_view name);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_COMM_LIFECYCLE_H_
