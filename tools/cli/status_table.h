// The table `ncclwatch status` prints: one line per communicator of each process of a job
// on this host, from shared memory alone.
#ifndef NCCLWATCH_TOOLS_CLI_STATUS_TABLE_H_
#define NCCLWATCH_TOOLS_CLI_STATUS_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/detect/verdict.h"
#include "core/shm/snapshot.h"

namespace ncclwatch::tools {

// Columns: RANK PID COMM RANK/N ENQ DONE CURRENT AGE STATE.
//   CURRENT  the oldest collective enqueued and not completed; else the oldest point-to-point
//            op posted and not complete, as "Recv from 1 (#3)" (its k-th towards that peer);
//            "-" when none;
//   AGE      how long CURRENT has been in flight, else since the last completion;
//   STATE    "STOPPED" (SIGSTOP, a debugger) or "D(wchan)" (in the kernel) for a process that
//            cannot move, else the communicator's lifecycle state, "in-flight"/"idle" when ready, and
//            "EXITED(status N)" / "EXITED(signal N)" (it recorded how it left), "DEAD" (gone
//            without a word) and "blocked-in-sync" for the process. A row an incident is
//            about starts with "culprit:KIND" (the rank it blames; every row of the blocked
//            process for sync_stuck) or "waits:KIND" (a rank waiting on the culprit).
// The rows are the snapshot's facts (core/watch/facts_from_snapshot.h), built once; what is in
// flight is core/detect/pending.h's judgement. Incidents are the one classifier's verdicts over
// those facts, with the job's own threshold, as the ranks' watchdog judges them; their
// summaries follow the table.
// `now_ns` is CLOCK_MONOTONIC, as are the snapshot's times.
std::string RenderStatusTable(const shm::JobSnapshot& snapshot, uint64_t now_ns);

// The same, as one JSON object (`ncclwatch status --json`): {"job", "gone", "processes": [
// {"global_rank", "pid", "host", "alive", "os_state": null | "R", "S", "D", "T", ... (/proc),
// "wchan": null | text, "exit": null | {"how", "status", "signal"},
// "blocked_in_sync", "comms": [{"comm", "rank", "nranks", "state", "last_enqueued_seq",
// "last_completed_seq", "in_flight_seq", "in_flight_op", "in_flight_ns", "p2p_in_flight": null | {"op", "peer", "seq",
// "in_flight_ns"}, "waiting" (a known wait: core/detect/pending.h), "oldest_wait_ns" (its age, the
// exporter's oldest pending op; null when none or unknown), "async_error",
// "untracked_ops", "incident": null | {"role": "culprit"|"waits", "kind"}}]}], "stall_threshold_ns",
// "incidents": [{"kind", "comm", "seq", "op", "culprit_ranks", "other_ranks", "since_ns",
// "summary"}]}. Exact numbers; names as the table shows them.
nlohmann::json StatusJson(const shm::JobSnapshot& snapshot, uint64_t now_ns);

// The job's own stall threshold (the largest its processes published), else the default.
uint64_t StatusThresholdNs(const shm::JobSnapshot& snapshot);
// The verdicts the ranks' watchdog would give on these facts at `now_ns` under `threshold_ns`.
std::vector<detect::Verdict> JudgeFacts(const detect::JobFacts& facts, uint64_t threshold_ns, uint64_t now_ns);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_CLI_STATUS_TABLE_H_
