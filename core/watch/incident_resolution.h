// When an incident this process dumped for is over: what it waits on (its key) is no longer
// pending in the host's facts. A collective 7 s slow under a 3 s threshold is dumped as a
// collective_hang and then completes; the watchdog then leaves a resolution note next to its
// dump (core/dump/resolution.h) and logs one line.
//
// The key, by kind:
//   straggler, collective_hang, rank_exited   #seq of the communicator completed
//   replay_straggler, replay_hang, and a      replay #seq of the graph named in the incident id
//   rank_exited in a replay                   completed (core/detect/replay_state.h)
//   init_hang                                 the communicator's init finished (not failed)
//   sync_stuck                                the process's host sync that began at the
//                                             incident's onset returned
//   mismatch, none, unknown                   never resolved: calls that disagree are a bug
//                                             of the job even when NCCL finished them
// Communicator keys are judged on the ranks this process holds (where its own dump's stacks
// came from); on those of the other processes on this host only when it holds none of that
// communicator (it dumped for a peer's incident). Completion is the detector's own
// (CommFacts::last_completed_seq). Communicators already destroyed still count with their
// last published numbers; an aborted one never resolves. Nothing found: not resolved.
#ifndef NCCLWATCH_CORE_WATCH_INCIDENT_RESOLUTION_H_
#define NCCLWATCH_CORE_WATCH_INCIDENT_RESOLUTION_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/detect/facts.h"
#include "core/detect/incident_tracker.h"
#include "core/detect/verdict.h"

namespace ncclwatch::watch {

// An incident's key is the detector's own (detect::IncidentKey, core/detect/incident_tracker.h):
// for sync_stuck, pid and since_ns are the blocked process and when its sync began.
using detect::IncidentKey;

// The key of the incident `incident_id` whose dump carries `verdict` (a local verdict or one
// copied from a trigger file); sync_stuck's process and onset come from its id
// ("sync_stuck-<pid>-<onset ns>"). nullopt for kinds that never resolve and malformed ids.
std::optional<IncidentKey> IncidentKeyOf(const detect::Verdict& verdict, const std::string& incident_id);

// True when `key` is no longer pending in `facts` (one poll's, facts_from_snapshot.h), judged
// from process `self` (see above).
bool IncidentKeyResolved(const IncidentKey& key, const detect::JobFacts& facts, pid_t self);

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_INCIDENT_RESOLUTION_H_
