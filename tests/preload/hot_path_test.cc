// The hook's hot path in CUDA calls, counted by the sim (sim/cudart/call_count.h): with the
// driver and no capture in progress, one call per op (the completion event's record); during
// a capture the op is still flagged captured and gets no event.
#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <string>

#include "core/shm/reader.h"
#include "core/shm/record_flags.h"
#include "rank_job.h"

namespace ncclwatch {
namespace {

using shm::CommView;
using shm::JobSnapshot;
using testing::RankJob;

constexpr int kTimeoutMs = 30000;

std::map<std::string, int> CallCounts(const testing::RankOutput& out) {
  std::map<std::string, int> calls;
  for (const std::string& line : out.lines) {
    char what[32] = {};
    int n = -1;
    if (std::sscanf(line.c_str(), "CALLS %31s %d", what, &n) == 2) calls[what] = n;
  }
  return calls;
}

// The warm-up ops, then collective, group, p2p, legacy, captured, after_capture,
// after_driver_begin, per_thread_captured, to_graph_captured, after_graphs.
constexpr size_t kRecords = 14;
constexpr size_t kCaptured = 8;
constexpr size_t kPerThreadCaptured = 11;
constexpr size_t kToGraphCaptured = 12;

bool Captured(size_t record) { return record == kCaptured || record == kPerThreadCaptured || record == kToGraphCaptured; }

bool Settled(const JobSnapshot& s) {
  if (s.processes.size() != 1 || s.processes[0].comms.size() != 1) return false;
  const CommView& c = s.processes[0].comms[0];
  if (c.records.size() != kRecords) return false;
  for (size_t i = 0; i < kRecords; ++i) {
    if (!Captured(i) && c.records[i].complete_ns == 0) return false;
  }
  return true;
}

void CheckHotPath(const std::vector<std::string>& env) {
  RankJob job("hotpath", 1, env);
  REQUIRE(job.WaitReady(kTimeoutMs));
  const std::map<std::string, int> calls = CallCounts(job.rank(0));
  INFO("rank output: CALLS lines parsed " << calls.size());
  CHECK(calls.at("collective") == 1);
  CHECK(calls.at("group") == 1);
  CHECK(calls.at("p2p") == 1);
  CHECK(calls.at("captured") == 1);  // the capture query, and no event
  CHECK(calls.at("after_capture") == 1);
  CHECK(calls.at("after_driver_begin") == 1);  // the failed begin was not left counted
  CHECK(calls.at("per_thread_captured") >= 1);   // the capture query (plus the context's, on a default stream)
  CHECK(calls.at("to_graph_captured") == 1);
  CHECK(calls.at("after_graphs") == 1);  // both captures ended: no query any more
  // The legacy stream is the current context's: cuCtxGetCurrent, and (the sim binds no
  // context to the thread) a push and pop of the event's context around the record.
  CHECK(calls.at("legacy") >= 1);
  CHECK(calls.at("legacy") <= 4);

  const JobSnapshot snap = job.SnapshotWhen(Settled, kTimeoutMs);
  REQUIRE(Settled(snap));
  const CommView& c = snap.processes[0].comms[0];
  for (size_t i = 0; i < kRecords; ++i) {
    INFO("record " << i);
    CHECK(((c.records[i].flags & shm::kRecordCaptured) != 0) == Captured(i));
    CHECK((c.records[i].flags & shm::kRecordUntracked) == 0);
  }
  for (size_t i : {kCaptured, kPerThreadCaptured, kToGraphCaptured}) CHECK(c.records[i].complete_ns == 0);
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0});
}

TEST_CASE("one CUDA call per op with no capture in progress; captured ops still flagged", "[hot_path]") {
  CheckHotPath({"NCCLSIM_NOOP=1", std::string("LD_LIBRARY_PATH=") + NCCLWATCH_SIM_LIB_DIR});
}

TEST_CASE("NCCLWATCH_CAPTURE_QUERY=always asks about every op and still flags captured ones", "[hot_path]") {
  RankJob job("hotpath", 1,
              {"NCCLSIM_NOOP=1", "NCCLWATCH_CAPTURE_QUERY=always", std::string("LD_LIBRARY_PATH=") + NCCLWATCH_SIM_LIB_DIR});
  REQUIRE(job.WaitReady(kTimeoutMs));
  const std::map<std::string, int> calls = CallCounts(job.rank(0));
  CHECK(calls.at("collective") == 2);  // cuStreamIsCapturing + cuEventRecord
  CHECK(calls.at("captured") == 1);
  const JobSnapshot snap = job.SnapshotWhen(Settled, kTimeoutMs);
  REQUIRE(Settled(snap));
  CHECK((snap.processes[0].comms[0].records[kCaptured].flags & shm::kRecordCaptured) != 0);
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0});
}

}  // namespace
}  // namespace ncclwatch
