// Which of an attempt's dumps say what the hang was, and which say what happened after it.
//
// Why: a job reacts to a hang. torch's own timeout aborts the communicator a rank is stuck in
// and kills it (SIGABRT), torchrun stops the others (SIGTERM), a straggler that gives up exits:
// each writes a last-gasp dump, or a peer writes one on its behalf, seconds after the incident's
// own dumps. Judged as the latest state, that teardown reads as a job with nothing pending
// (every op aborted, every rank gone): "VERDICT: none" for a job that hung.
//
// So a teardown snapshot adds to the incident and never replaces it. A dump is a teardown
// snapshot when it is a last gasp (incident.trigger "last-gasp", or incident.teardown set), a
// dump its writer wrote beside one (on behalf of a gone process: the same incident), or a dump
// that answers a peer's last gasp (trigger-file with the last gasp's incident id). Per process
// (host and pid) the attempt is judged by:
//   1. its earliest dump of an incident (not a teardown) that did not resolve, else its earliest
//      dump of an incident: the first incident that mattered, with the stacks of that moment;
//   2. a process with no such dump (the job was torn down before the threshold), by its
//      earliest teardown snapshot of its own, else the earliest one a peer wrote for it, judged
//      as at the abort (detect::AsAtAbort): an op its communicator's abort ended was stuck,
//      not done.
// Every other dump of the attempt (teardowns, later incidents, peers' dumps of a process gone)
// is what happened next (Analysis::then), or, when it resolved before the judged one, history.
#ifndef NCCLWATCH_CORE_ANALYZE_ATTEMPT_SNAPSHOT_H_
#define NCCLWATCH_CORE_ANALYZE_ATTEMPT_SNAPSHOT_H_

#include <vector>

#include "core/analyze/resolution.h"
#include "core/analyze/runs.h"
#include "core/dump/dump_reader.h"

namespace ncclwatch::analyze {

struct JudgedDump {
  const dump::LoadedDump* loaded = nullptr;
  bool teardown = false;  // a teardown snapshot: judged as at the abort
};

struct AttemptSnapshot {
  std::vector<JudgedDump> judged;                // one per process, in path order
  std::vector<const dump::LoadedDump*> after;    // the rest, by detection time (wall clock)
  std::vector<const dump::LoadedDump*> before;   // incidents that resolved before a judged dump
};

AttemptSnapshot SelectSnapshot(const AttemptDumps& attempt, const ResolutionIndex& resolutions);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_ATTEMPT_SNAPSHOT_H_
