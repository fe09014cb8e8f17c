// The id of an incident, shared by every rank that dumps for it.
//
// Derived only from facts every rank agrees on, so ranks on one host (each running its own
// detector) and ranks on other hosts (told through the trigger file) name the incident
// alike and dump it once: "<kind>-<comm hex>-<seq>", e.g. "straggler-0x6a2f01c9e35b7d10-7";
// for sync_stuck, which concerns one process, "sync_stuck-<pid>-<onset ns>"; for a wait in a
// replay of a CUDA graph, "<kind>-<comm hex>-<graph key hex>-<replay>", e.g.
// "replay_hang-0x6a2f01c9e35b7d10-0x9e3779b97f4a7c15-5".
// Only [A-Za-z0-9_-] and 'x' appear, so the id is safe in file names.
#ifndef NCCLWATCH_CORE_WATCH_INCIDENT_ID_H_
#define NCCLWATCH_CORE_WATCH_INCIDENT_ID_H_

#include <string>

#include "core/detect/verdict.h"

namespace ncclwatch::watch {

std::string IncidentIdOf(const detect::Verdict& verdict);

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_INCIDENT_ID_H_
