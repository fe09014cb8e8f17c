// tools/exporter/metrics_families.h: snapshots in, metric families out.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/shm/record_flags.h"
#include "core/watch/facts_from_snapshot.h"
#include "tools/exporter/metrics_families.h"

namespace ncclwatch::tools {
namespace {

constexpr uint64_t kSec = 1000000000ull;
constexpr uint64_t kNow = 1000 * kSec;

shm::RecordView Record(uint64_t seq, uint64_t enqueue_ns, uint64_t complete_ns, uint32_t flags = 0,
                       shm::Op op = shm::Op::kAllReduce) {
  shm::RecordView r;
  r.op = op;
  r.seq = seq;
  r.enqueue_ns = enqueue_ns;
  r.complete_ns = complete_ns;
  r.flags = flags;
  return r;
}

shm::CommView Comm(uint64_t hash, int rank, int nranks, uint64_t issued, uint64_t completed) {
  shm::CommView c;
  c.state = shm::CommState::kReady;
  c.comm_hash = hash;
  c.rank = rank;
  c.nranks = nranks;
  c.device = rank;
  c.flags = shm::kCommHashKnown;
  c.last_enqueued_seq = issued;
  c.last_completed_seq = completed;
  for (uint64_t s = 1; s <= issued; ++s) {
    c.records.push_back(Record(s, kNow - (20 - s) * kSec, s <= completed ? kNow - (19 - s) * kSec : 0));
  }
  return c;
}

shm::ProcessView Process(int global_rank, pid_t pid, std::vector<shm::CommView> comms) {
  shm::ProcessView p;
  p.pid = pid;
  p.alive = true;
  p.host = "node7";
  p.job_id = "job-a";
  p.global_rank = global_rank;
  p.stall_threshold_ns = 2'500'000'000;
  p.comms = std::move(comms);
  return p;
}

MetricsInput Input(std::vector<shm::ProcessView> processes) {
  MetricsInput in;
  shm::JobSnapshot job;
  job.job_id = "job-a";
  job.processes = std::move(processes);
  in.jobs.push_back(std::move(job));
  in.now_ns = kNow;
  return in;
}

const prometheus::MetricFamily& FamilyNamed(const MetricsOutput& out, const std::string& name) {
  for (const auto& f : out.families) {
    if (f.name == name) return f;
  }
  FAIL("no family " << name);
  throw;
}

std::string Label(const prometheus::ClientMetric& m, const std::string& name) {
  for (const auto& l : m.label) {
    if (l.name == name) return l.value;
  }
  return "<absent>";
}

double Value(const prometheus::ClientMetric& m) { return m.gauge.value; }

}  // namespace

TEST_CASE("a communicator's name is its comm_name label, control characters escaped") {
  shm::CommView named = Comm(0xabc, 0, 1, 1, 1);
  named.name = "0:default_pg\x1b[2J";
  MetricsOutput out = BuildMetricFamilies(Input({Process(0, 100, {named})}));
  const auto& issued = FamilyNamed(out, "ncclwatch_comm_last_issued_seq");
  REQUIRE(issued.metric.size() == 1);
  CHECK(Label(issued.metric[0], "comm_name") == "0:default_pg\\x1b[2J");
}

TEST_CASE("each rank's communicator is one series with the documented labels and values") {
  MetricsOutput out = BuildMetricFamilies(Input({Process(0, 100, {Comm(0xabc, 0, 2, 7, 6)}),
                                                 Process(1, 101, {Comm(0xabc, 1, 2, 6, 6)})}));
  const auto& issued = FamilyNamed(out, "ncclwatch_comm_last_issued_seq");
  REQUIRE(issued.type == prometheus::MetricType::Gauge);
  REQUIRE(issued.metric.size() == 2);
  const auto& m0 = issued.metric[0];
  CHECK(Label(m0, "job") == "job-a");
  CHECK(Label(m0, "host") == "node7");
  CHECK(Label(m0, "comm") == "0xabc");  // NCCL's form: unpadded
  CHECK(Label(m0, "comm_name").empty());  // unnamed
  CHECK(Label(m0, "comm_rank") == "0");
  CHECK(Label(m0, "rank") == "0");
  CHECK(Label(m0, "nranks") == "2");
  CHECK(Label(m0, "device") == "0");
  CHECK(m0.label.size() == 8);
  CHECK(Value(m0) == 7);
  CHECK(Value(issued.metric[1]) == 6);
  CHECK(Value(FamilyNamed(out, "ncclwatch_comm_last_completed_seq").metric[0]) == 6);
  // Rank 0's op #7 was enqueued at now - 13 s and is not complete; rank 1 has nothing pending.
  const auto& pending = FamilyNamed(out, "ncclwatch_comm_oldest_pending_seconds");
  CHECK(Value(pending.metric[0]) == Approx(13.0));
  CHECK(Value(pending.metric[1]) == 0.0);
  CHECK(out.dropped == 0);
}

// The exporter asks the detector (core/detect/pending.h) what is pending, over the facts.
double Pending(const shm::CommView& c) { return OldestPendingSeconds(watch::CommFactsFromSnapshot(c), kNow); }

TEST_CASE("the oldest pending op is the detector's: completion in stream order, captured and failed owe none") {
  shm::CommView c = Comm(1, 0, 2, 3, 3);
  CHECK(Pending(c) == 0.0);
  c.records[1].complete_ns = 0;
  c.records[1].flags = shm::kRecordUntracked;  // #2: completion unknown, but #3 after it completed
  CHECK(Pending(c) == 0.0);
  c.records[2].complete_ns = 0;
  c.records[2].flags = shm::kRecordUntracked;
  c.last_completed_seq = 1;
  CHECK(Pending(c) == 0.0);  // #2 and #3 both of unknown completion: no evidence of a wait
  c.records[2].flags = 0;
  CHECK(Pending(c) == Approx(18.0));  // #3 tracked and pending: a wait since #2, the in-flight one
  c.records[1].flags = shm::kRecordCaptured;
  c.records[2].flags = shm::kRecordCaptured;
  CHECK(Pending(c) == 0.0);
  c.records[1].flags = shm::kRecordFailed;
  c.records[2].flags = shm::kRecordFailed;
  CHECK(Pending(c) == 0.0);
  // A pending P2P op counts too (it is outside the collective numbering).
  c.records.push_back(Record(1, kNow - 4 * kSec, 0, 0, shm::Op::kSend));
  CHECK(Pending(c) == Approx(4.0));
}

TEST_CASE("every record the exporter read is judged (--max-records), not only the watchdog's newest 64") {
  // #31 pending since now - 169 s, then 69 more issued: the oldest pending record is the 70th newest.
  shm::CommView c = Comm(0xabc, 0, 1, 0, 0);
  for (uint64_t s = 1; s <= 100; ++s) c.records.push_back(Record(s, kNow - (200 - s) * kSec, s <= 30 ? kNow : 0));
  c.last_enqueued_seq = 100;
  c.last_completed_seq = 30;
  MetricsOutput out = BuildMetricFamilies(Input({Process(0, 100, {c})}));
  CHECK(Value(FamilyNamed(out, "ncclwatch_comm_oldest_pending_seconds").metric[0]) == Approx(169.0));
}

TEST_CASE("a pending op whose record left the ring has an unknown age: NaN, never 0") {
  shm::CommView c = Comm(1, 0, 2, 5, 3);
  c.records.erase(c.records.begin(), c.records.begin() + 5);
  CHECK(std::isnan(Pending(c)));
}

TEST_CASE("impossible values drop the series instead of serving them") {
  shm::CommView ahead = Comm(1, 0, 2, 3, 3);
  ahead.last_completed_seq = 9;  // completed beyond issued
  shm::CommView outside = Comm(2, 5, 2, 3, 3);  // rank 5 of 2
  shm::CommView future = Comm(3, 0, 2, 3, 2);
  future.records[2].enqueue_ns = kNow + kSec;  // enqueued after now
  shm::CommView zero_ranks = Comm(4, 0, 0, 1, 1);
  MetricsOutput out = BuildMetricFamilies(Input({Process(0, 100, {ahead, outside, future, zero_ranks})}));
  CHECK(FamilyNamed(out, "ncclwatch_comm_last_issued_seq").metric.empty());
  CHECK(FamilyNamed(out, "ncclwatch_comm_oldest_pending_seconds").metric.empty());
  CHECK(out.dropped == 4);
}

TEST_CASE("two segments claiming one series (a forged copy) serve neither") {
  MetricsOutput out = BuildMetricFamilies(Input({Process(0, 100, {Comm(0xabc, 0, 2, 7, 6)}),
                                                 Process(0, 100, {Comm(0xabc, 0, 2, 99, 99)}),
                                                 Process(1, 101, {Comm(0xabc, 1, 2, 6, 6)})}));
  const auto& issued = FamilyNamed(out, "ncclwatch_comm_last_issued_seq");
  REQUIRE(issued.metric.size() == 1);
  CHECK(Label(issued.metric[0], "rank") == "1");
  CHECK(out.dropped == 2);
  CHECK(FamilyNamed(out, "ncclwatch_process_up").metric.size() == 2);  // pid 100 once
}

TEST_CASE("communicators a rank left, or whose init failed, are not served") {
  shm::CommView destroyed = Comm(1, 0, 2, 3, 3);
  destroyed.state = shm::CommState::kDestroyed;
  shm::CommView failed = Comm(2, 0, 2, 0, 0);
  failed.state = shm::CommState::kInitFailed;
  shm::CommView free_slot = Comm(3, 0, 2, 0, 0);
  free_slot.state = shm::CommState::kFree;
  MetricsOutput out = BuildMetricFamilies(Input({Process(0, 100, {destroyed, failed, free_slot})}));
  CHECK(FamilyNamed(out, "ncclwatch_comm_last_issued_seq").metric.empty());
  CHECK(out.dropped == 0);
}

TEST_CASE("label values from shared memory are valid UTF-8 without control characters") {
  shm::ProcessView p = Process(-1, 100, {Comm(1, 0, 2, 1, 1)});
  p.host = std::string("evil\n# TYPE x gauge\x1b[2J\xff\"", 24);
  MetricsInput in = Input({p});
  in.jobs[0].job_id = "job\"}\n";
  MetricsOutput out = BuildMetricFamilies(in);
  const auto& m = FamilyNamed(out, "ncclwatch_comm_last_issued_seq").metric.at(0);
  for (const auto& l : m.label) {
    for (unsigned char ch : l.value) {
      CHECK(ch >= 0x20);
      CHECK(ch != 0x7f);
      CHECK(ch != 0xff);
    }
  }
  CHECK(Label(m, "rank") == "unknown");
  CHECK(Label(m, "host").find('\n') == std::string::npos);
}

TEST_CASE("the stall threshold is the job's published one, else the fallback") {
  MetricsInput in = Input({Process(0, 100, {}), Process(1, 101, {})});
  in.fallback_stall_sec = 60;
  MetricsOutput out = BuildMetricFamilies(in);
  const auto& t = FamilyNamed(out, "ncclwatch_stall_threshold_seconds");
  REQUIRE(t.metric.size() == 1);
  CHECK(t.metric[0].label.size() == 1);
  CHECK(Label(t.metric[0], "job") == "job-a");
  CHECK(Value(t.metric[0]) == 2.5);
  for (auto& p : in.jobs[0].processes) p.stall_threshold_ns = 0;  // a writer before the field
  CHECK(Value(FamilyNamed(BuildMetricFamilies(in), "ncclwatch_stall_threshold_seconds").metric[0]) == 60);
}

TEST_CASE("process up and exit evidence") {
  shm::ProcessView running = Process(0, 100, {});
  shm::ProcessView exited = Process(1, 101, {});
  exited.exited = true;
  exited.exit_how = shm::ExitHow::kStatus;
  exited.exit_status = 3;
  shm::ProcessView signalled = Process(2, 102, {});
  signalled.exited = true;
  signalled.alive = false;
  signalled.exit_how = shm::ExitHow::kSignal;
  signalled.exit_signal = 6;
  shm::ProcessView vanished = Process(3, 103, {});
  vanished.alive = false;
  vanished.stale = true;
  MetricsOutput out = BuildMetricFamilies(Input({running, exited, signalled, vanished}));
  const auto& up = FamilyNamed(out, "ncclwatch_process_up");
  REQUIRE(up.metric.size() == 4);
  CHECK(Value(up.metric[0]) == 1);
  CHECK(Label(up.metric[0], "pid") == "100");
  CHECK(Value(up.metric[1]) == 0);
  CHECK(Value(up.metric[3]) == 0);
  const auto& gone = FamilyNamed(out, "ncclwatch_process_exited");
  REQUIRE(gone.metric.size() == 3);
  CHECK(Label(gone.metric[0], "how") == "status");
  CHECK(Label(gone.metric[1], "how") == "signal");
  CHECK(Label(gone.metric[2], "how") == "vanished");
  const auto& code = FamilyNamed(out, "ncclwatch_process_exit_code");
  REQUIRE(code.metric.size() == 2);
  CHECK(Value(code.metric[0]) == 3);
  CHECK(Value(code.metric[1]) == 6);
}

TEST_CASE("dump and incident counts are counters labelled job, host (and kind)") {
  MetricsInput in = Input({});
  DumpCounts counts;
  counts.dumps = 4;
  counts.incidents_by_kind["straggler"] = 1;
  counts.incidents_by_kind["rank_exited"] = 2;
  in.dumps[{"job-a", "node7"}] = counts;
  MetricsOutput out = BuildMetricFamilies(in);
  const auto& dumps = FamilyNamed(out, "ncclwatch_dumps_total");
  CHECK(dumps.type == prometheus::MetricType::Counter);
  REQUIRE(dumps.metric.size() == 1);
  CHECK(dumps.metric[0].counter.value == 4);
  const auto& incidents = FamilyNamed(out, "ncclwatch_incidents_total");
  REQUIRE(incidents.metric.size() == 2);
  CHECK(Label(incidents.metric[0], "kind") == "rank_exited");
  CHECK(incidents.metric[0].counter.value == 2);
  CHECK(FamilyNamed(out, "ncclwatch_process_up").metric.empty());  // a job with no process: no series
}

TEST_CASE("every counter is named _total, no other family is: both formats name the same series") {
  // OpenMetrics names a counter's sample <family>_total (tools/exporter/openmetrics_serializer.h).
  MetricsInput in = Input({Process(0, 100, {Comm(0x1f, 0, 2, 5, 4)})});
  DumpCounts counts;
  counts.dumps = 1;
  counts.incidents_by_kind["straggler"] = 1;
  in.dumps[{"job-a", "node7"}] = counts;
  const MetricsOutput out = BuildMetricFamilies(in);
  int counters = 0;
  for (const auto& f : out.families) {
    INFO(f.name);
    const bool total = f.name.size() > 6 && f.name.compare(f.name.size() - 6, 6, "_total") == 0;
    CHECK(total == (f.type == prometheus::MetricType::Counter));
    counters += f.type == prometheus::MetricType::Counter;
  }
  CHECK(counters == 2);
}

}  // namespace ncclwatch::tools
