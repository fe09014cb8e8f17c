// The CUDA graph replays of a communicator in a dump (detect::ReplayFacts): `comms[].replays`,
// and `comms[].replays_dropped`, beside the records (core/dump/README.md). Written and read
// only here; dump_json.cc writes them once per communicator and lists their fields in the
// communicator's spec.
#ifndef NCCLWATCH_CORE_DUMP_REPLAY_JSON_H_
#define NCCLWATCH_CORE_DUMP_REPLAY_JSON_H_

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/detect/facts.h"
#include "core/dump/checked_reader.h"

namespace ncclwatch::dump {

// Adds "replays" and "replays_dropped" to the communicator's object `out`.
void AddReplaysJson(const detect::CommFacts& comm, nlohmann::json* out);

// Appends the fields of a communicator's object that fill its replays (detect::CommFacts):
// "replays" (absent in dumps before layout 8: none) and "replays_dropped". At most
// kMaxReplaysPerComm are kept, the newest, so a hostile file cannot make the rules (which
// compare replays per graph) slow; each one dropped counts in replays_dropped.
void AppendReplayFields(std::vector<FieldSpec>* fields);

// The watchdog writes at most shm::kReplayRingCapacity (32) per communicator.
inline constexpr size_t kMaxReplaysPerComm = 256;

}  // namespace ncclwatch::dump

#endif  // NCCLWATCH_CORE_DUMP_REPLAY_JSON_H_
