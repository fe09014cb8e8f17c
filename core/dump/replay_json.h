// The CUDA graph replays of a communicator in a dump (detect::ReplayFacts): `comms[].replays`,
// and `comms[].replays_dropped`, beside the records (core/dump/README.md). Written and read
// only here; dump_json.cc calls both once per communicator.
#ifndef NCCLWATCH_CORE_DUMP_REPLAY_JSON_H_
#define NCCLWATCH_CORE_DUMP_REPLAY_JSON_H_

#include <nlohmann/json.hpp>

#include "core/detect/facts.h"
#include "core/dump/checked_json.h"

namespace ncclwatch::dump {

// Adds "replays" and "replays_dropped" to the communicator's object `out`.
void AddReplaysJson(const detect::CommFacts& comm, nlohmann::json* out);

// Reads them back from the communicator's node `n` (absent in dumps before layout 8: none).
// At most kMaxReplaysPerComm are kept, the newest, so a hostile file cannot make the rules
// (which compare replays per graph) slow.
void ReadReplaysJson(const CheckedJson& n, detect::CommFacts* out);

// The watchdog writes at most shm::kReplayRingCapacity (32) per communicator.
inline constexpr size_t kMaxReplaysPerComm = 256;

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_REPLAY_JSON_H_
