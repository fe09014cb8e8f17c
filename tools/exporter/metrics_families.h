// The metrics `ncclwatch exporter` serves, built from job snapshots alone (each turned into
// its facts once, core/watch/facts_from_snapshot.h, and judged by core/detect): a pure function,
// so that every value it may serve is unit-tested without a server or shared memory.
//
// Families (labels; see tools/README.md "exporter" for the cardinality):
//   ncclwatch_comm_last_issued_seq, ncclwatch_comm_last_completed_seq,
//   ncclwatch_comm_oldest_pending_seconds, ncclwatch_comm_untracked_ops
//       {job, host, comm, comm_rank, rank, nranks}: one series per (process, communicator)
//   ncclwatch_stall_threshold_seconds {job}
//   ncclwatch_process_up, ncclwatch_process_exited, ncclwatch_process_exit_code
//       {job, host, rank, pid[, how]}
//   ncclwatch_incidents_total {job, host, kind}, ncclwatch_dumps_total {job, host}
//       (from a dump directory's files, see dump_census.h)
// Exporter health (scrape errors, build info) is added by the exporter itself.
//
// No value is invented: a field a forged or torn segment makes impossible (a completed seq
// ahead of the issued one, a rank outside its communicator, an enqueue time in the future)
// drops that series and counts one in `dropped`, rather than serving a wrong number.
#ifndef NCCLWATCH_TOOLS_EXPORTER_METRICS_FAMILIES_H_
#define NCCLWATCH_TOOLS_EXPORTER_METRICS_FAMILIES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "core/detect/facts.h"
#include "core/shm/snapshot.h"

namespace ncclwatch::tools {

// Dump files seen for one (job, host): see dump_census.h.
struct DumpCounts {
  uint64_t dumps = 0;
  std::map<std::string, uint64_t> incidents_by_kind;  // verdict kind -> incidents
};

struct MetricsInput {
  std::vector<shm::JobSnapshot> jobs;
  uint64_t now_ns = 0;  // CLOCK_MONOTONIC, the clock of the segments
  // Used for a job whose segments do not publish NCCLWATCH_STALL_SEC (writers before the
  // field): the exporter's --stall-sec.
  double fallback_stall_sec = 60.0;
  // (job, host) -> dump census; empty without --dump-dir.
  std::map<std::pair<std::string, std::string>, DumpCounts> dumps;
};

struct MetricsOutput {
  std::vector<prometheus::MetricFamily> families;
  uint64_t dropped = 0;  // series left out because their values were impossible
};

MetricsOutput BuildMetricFamilies(const MetricsInput& input);

// Seconds the oldest op pending on `comm` (core/detect/pending.h: OldestPendingOp, the
// detector's own judgement) has waited at `now_ns`: 0 when none is pending; NaN when one is
// pending but its record is no longer in the ring, so its age is unknown; -1 when its issue
// time lies after `now_ns` (a record not to be believed). Exposed for the tests.
double OldestPendingSeconds(const detect::CommFacts& comm, uint64_t now_ns);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_EXPORTER_METRICS_FAMILIES_H_
