#include "tools/exporter/metrics_families.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/format/escape.h"
#include "core/format/hex.h"
#include "core/detect/pending.h"
#include "core/detect/replay_state.h"
#include "core/watch/facts_from_snapshot.h"

namespace ncclwatch::tools {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr double kNsPerSec = 1e9;

MetricFamily Family(const char* name, const char* help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

// Label values come from shared memory another process wrote: valid UTF-8 without controls
// (the exposition format requires UTF-8; the escaper also bounds what a terminal would see).
std::string Clean(const std::string& text) { return format::EscapeForTerminal(text); }

std::string RankLabel(int rank) { return rank >= 0 ? std::to_string(rank) : "unknown"; }

void Add(MetricFamily* family, std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  if (family->type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  family->metric.push_back(std::move(m));
}

// A communicator whose fields can all be true at once. A rank that left it (destroyed,
// aborted, ...) or whose init failed takes no further part: its series would only go stale.
bool Exportable(const detect::CommFacts& c) {
  return c.lifecycle == detect::CommLifecycle::kReady || c.lifecycle == detect::CommLifecycle::kSuspended ||
         c.lifecycle == detect::CommLifecycle::kInitializing;
}

bool Consistent(const detect::CommFacts& c) {
  return c.nranks > 0 && c.rank >= 0 && c.rank < c.nranks && c.last_completed_seq <= c.last_enqueued_seq;
}

struct CommFamilies {
  MetricFamily issued = Family("ncclwatch_comm_last_issued_seq",
                               "Number of the last collective this rank issued on the communicator (1-based; 0: none)",
                               MetricType::Gauge);
  MetricFamily completed = Family("ncclwatch_comm_last_completed_seq",
                                  "Number of the last collective seen complete on this rank, in order (0: none)",
                                  MetricType::Gauge);
  MetricFamily pending = Family("ncclwatch_comm_oldest_pending_seconds",
                                "Age of the oldest op issued and not seen complete on this rank; 0 when none; NaN when "
                                "one is pending whose record left the ring",
                                MetricType::Gauge);
  MetricFamily untracked = Family("ncclwatch_comm_untracked_ops",
                                  "Ops whose completion could not be tracked (never counted complete)",
                                  MetricType::Gauge);
  // CUDA graphs that replay the communicator's captured ops, one series per graph (its key,
  // shared by the ranks that captured the same ops) among the replays the ring keeps (32).
  MetricFamily replays_launched = Family("ncclwatch_graph_last_launched_replay",
                                         "Number of the last replay of the CUDA graph this rank launched (1-based)",
                                         MetricType::Gauge);
  MetricFamily replays_completed = Family("ncclwatch_graph_last_completed_replay",
                                          "Number of the last replay of the CUDA graph seen complete on this rank, in "
                                          "order (0: none)",
                                          MetricType::Gauge);
};

struct ProcessFamilies {
  MetricFamily up = Family("ncclwatch_process_up",
                           "1 while the process runs and has not recorded its exit, else 0", MetricType::Gauge);
  MetricFamily exited = Family("ncclwatch_process_exited",
                               "1 for a process that is gone; how: status (exit), signal (fatal signal it caught), "
                               "vanished (killed or crashed without a word)",
                               MetricType::Gauge);
  MetricFamily exit_code = Family("ncclwatch_process_exit_code",
                                  "Exit status (how=status) or signal number (how=signal) the process recorded",
                                  MetricType::Gauge);
};

// The identity of one comm series; two segments claiming the same one (a forged copy, a
// recycled pid) make it ambiguous, and then neither is served.
using SeriesKey = std::vector<ClientMetric::Label>;

// One pair of series per graph the communicator replayed (replay_state.h).
void AddReplays(const detect::CommFacts& c, const SeriesKey& labels, CommFamilies* out) {
  for (const uint64_t graph : detect::GraphsOf(c)) {
    const detect::ReplayProgress progress = detect::ProgressOf(c, graph);
    SeriesKey with_graph = labels;
    with_graph.push_back({"graph", format::FormatHex(graph)});
    std::sort(with_graph.begin(), with_graph.end());
    Add(&out->replays_launched, with_graph, static_cast<double>(progress.launched));
    Add(&out->replays_completed, with_graph, static_cast<double>(progress.completed));
  }
}

void AddComms(const std::string& job_id, const detect::JobFacts& facts, uint64_t now_ns, CommFamilies* out,
              uint64_t* dropped) {
  struct Pending {
    SeriesKey labels;
    const detect::CommFacts* comm;
  };
  std::vector<Pending> series;
  std::map<SeriesKey, int> seen;
  const std::string job_label = Clean(job_id);
  for (const auto& p : facts.processes) {
    const std::string host = Clean(p.host);
    for (const auto& c : p.comms) {
      if (!Exportable(c)) continue;
      if (!Consistent(c)) {
        ++*dropped;
        continue;
      }
      // comm_name: ncclConfig_t.commName (torch: the process group), "" when none; the
      // serializer escapes \ " and newlines as the exposition format asks.
      SeriesKey labels{{"comm", format::FormatHex(c.comm_hash)},
                       {"comm_name", Clean(c.name)},
                       {"comm_rank", std::to_string(c.rank)},
                       {"device", c.device >= 0 ? std::to_string(c.device) : "unknown"},
                       {"host", host},
                       {"job", job_label},
                       {"nranks", std::to_string(c.nranks)},
                       {"rank", RankLabel(p.global_rank)}};
      ++seen[labels];
      series.push_back({std::move(labels), &c});
    }
  }
  for (auto& s : series) {
    if (seen[s.labels] > 1) {
      ++*dropped;
      continue;
    }
    const double pending = OldestPendingSeconds(*s.comm, now_ns);
    if (pending < 0) {  // an enqueue time in the future: the record is not to be believed
      ++*dropped;
      continue;
    }
    Add(&out->issued, s.labels, static_cast<double>(s.comm->last_enqueued_seq));
    Add(&out->completed, s.labels, static_cast<double>(s.comm->last_completed_seq));
    Add(&out->pending, s.labels, pending);
    Add(&out->untracked, s.labels, static_cast<double>(s.comm->untracked_ops));
    AddReplays(*s.comm, s.labels, out);
  }
}

void AddProcesses(const std::string& job_id, const detect::JobFacts& facts, ProcessFamilies* out) {
  const std::string job_label = Clean(job_id);
  std::set<SeriesKey> seen;
  for (const auto& p : facts.processes) {
    SeriesKey labels{{"host", Clean(p.host)}, {"job", job_label}, {"pid", std::to_string(p.pid)},
                     {"rank", RankLabel(p.global_rank)}};
    if (!seen.insert(labels).second) continue;  // one pid, one series (a copy is not a second process)
    Add(&out->up, labels, p.alive ? 1 : 0);
    if (p.alive) continue;
    const char* how = !p.exit.recorded ? "vanished" : p.exit.signal != 0 ? "signal" : "status";
    SeriesKey with_how = labels;
    with_how.push_back({"how", how});
    std::sort(with_how.begin(), with_how.end());
    Add(&out->exited, with_how, 1);
    if (p.exit.recorded) Add(&out->exit_code, with_how, p.exit.signal != 0 ? p.exit.signal : p.exit.status);
  }
}

// Communicator slots the facts left out as impossible (a rank outside [0, nranks)): served
// by no series, counted as dropped like any other impossible value.
uint64_t CommsLeftOut(const shm::JobSnapshot& job, const detect::JobFacts& facts) {
  uint64_t read = 0, kept = 0;
  for (const auto& p : job.processes) {
    if (p.closed) continue;
    for (const auto& c : p.comms) read += c.state != shm::CommState::kFree ? 1 : 0;
  }
  for (const auto& p : facts.processes) kept += p.comms.size();
  return read > kept ? read - kept : 0;
}

// The threshold the job's writers published (all agree in a normal job; the largest wins
// otherwise, so that a rule never alerts sooner than any rank would); the fallback when none did.
double StallThresholdSec(const shm::JobSnapshot& job, double fallback) {
  uint64_t ns = 0;
  for (const auto& p : job.processes) ns = std::max(ns, p.stall_threshold_ns);
  return ns != 0 ? static_cast<double>(ns) / kNsPerSec : fallback;
}

}  // namespace

double OldestPendingSeconds(const detect::CommFacts& comm, uint64_t now_ns) {
  const std::optional<detect::Wait> oldest = detect::OldestPendingOp(comm);
  if (!oldest) return 0;
  if (oldest->since_ns == 0) return std::numeric_limits<double>::quiet_NaN();
  if (oldest->since_ns > now_ns) return -1;
  return static_cast<double>(now_ns - oldest->since_ns) / kNsPerSec;
}

MetricsOutput BuildMetricFamilies(const MetricsInput& input) {
  MetricsOutput out;
  CommFamilies comms;
  ProcessFamilies processes;
  MetricFamily threshold = Family("ncclwatch_stall_threshold_seconds",
                                  "The job's NCCLWATCH_STALL_SEC, as its processes published it", MetricType::Gauge);
  MetricFamily incidents = Family("ncclwatch_incidents_total",
                                  "Incidents the job's watchdogs dumped on this host, by verdict kind",
                                  MetricType::Counter);
  MetricFamily dumps = Family("ncclwatch_dumps_total", "Dump files the job's watchdogs wrote on this host",
                              MetricType::Counter);
  std::set<std::string> jobs_seen;
  for (const auto& job : input.jobs) {
    if (job.processes.empty() || !jobs_seen.insert(job.job_id).second) continue;
    const detect::JobFacts facts = watch::FactsFromSnapshot(job, watch::kEveryRecordRead);
    out.dropped += CommsLeftOut(job, facts);
    AddComms(job.job_id, facts, input.now_ns, &comms, &out.dropped);
    AddProcesses(job.job_id, facts, &processes);
    Add(&threshold, {{"job", Clean(job.job_id)}}, StallThresholdSec(job, input.fallback_stall_sec));
  }
  for (const auto& [key, counts] : input.dumps) {
    const std::vector<ClientMetric::Label> labels{{"host", Clean(key.second)}, {"job", Clean(key.first)}};
    Add(&dumps, labels, static_cast<double>(counts.dumps));
    for (const auto& [kind, n] : counts.incidents_by_kind) {
      Add(&incidents, {{"host", Clean(key.second)}, {"job", Clean(key.first)}, {"kind", Clean(kind)}},
          static_cast<double>(n));
    }
  }
  for (MetricFamily* f : {&comms.issued, &comms.completed, &comms.pending, &comms.untracked, &comms.replays_launched,
                          &comms.replays_completed, &threshold,
                          &processes.up, &processes.exited, &processes.exit_code, &incidents, &dumps}) {
    out.families.push_back(std::move(*f));
  }
  return out;
}

}  // namespace ncclwatch::tools
