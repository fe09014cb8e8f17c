// One snapshot, three readers of progress: the watchdog's facts (core/detect/pending.h over
// core/watch/facts_from_snapshot.h), `ncclwatch status --json` and the exporter's
// ncclwatch_comm_oldest_pending_seconds must name the same pending ops with the same ages.
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "core/detect/pending.h"
#include "core/format/hex.h"
#include "core/shm/record_flags.h"
#include "core/watch/facts_from_snapshot.h"
#include "tests/core/watch/snapshot_builder.h"
#include "tools/cli/status_table.h"
#include "tools/exporter/metrics_families.h"

namespace ncclwatch::tools {
namespace {

using testing::Process;
using testing::ReadyComm;
using testing::Record;

constexpr uint64_t kSec = 1'000'000'000ull;
constexpr uint64_t kNow = 100 * kSec;

// Rank 0 holds four communicators, each pending in another way; rank 1 is idle.
shm::JobSnapshot MixedJob() {
  shm::ProcessView p = Process(4242, 0);
  shm::CommView in_flight = ReadyComm(0xa, 0, 2, 5, 3);        // #4 in flight since t = 4 s
  shm::CommView untracked = ReadyComm(0xb, 0, 2, 4, 2);        // #3 and #4 of unknown completion
  untracked.records[2].flags = shm::kRecordUntracked;
  untracked.records[3].flags = shm::kRecordUntracked;
  shm::CommView behind = ReadyComm(0xc, 0, 2, 4, 4);           // #3 unseen, #4 seen done after it
  behind.records[2].complete_ns = 0;
  behind.last_completed_seq = 2;
  shm::CommView p2p = ReadyComm(0xd, 0, 2, 2, 2);              // a Send posted at t = 90 s
  shm::RecordView send = Record(1, shm::Op::kSend, 90 * kSec);
  send.root_or_peer = 1;
  p2p.records.push_back(send);
  shm::CommView aged = ReadyComm(0xe, 0, 2, 9, 2);             // #3..#9 pending, records gone
  aged.records.clear();
  p.comms = {in_flight, untracked, behind, p2p, aged};
  shm::ProcessView idle = Process(4243, 1);
  idle.comms = {ReadyComm(0xa, 1, 2, 5, 5)};
  shm::JobSnapshot snap;
  snap.job_id = "one-pending";
  snap.processes = {p, idle};
  return snap;
}

// comm hex -> age in seconds (NaN: pending, age unknown), as each reader gives it.
using Ages = std::map<std::string, double>;

Ages WatchdogAges(const shm::JobSnapshot& snap, int32_t pid) {
  Ages out;
  const detect::JobFacts facts = watch::FactsFromSnapshot(snap);
  for (const auto& p : facts.processes) {
    if (p.pid != pid) continue;
    for (const auto& c : p.comms) {
      const std::optional<detect::Wait> wait = detect::OldestPendingOp(c);
      if (!wait) continue;
      out[format::FormatHex(c.comm_hash)] =
          wait->since_ns == 0 ? std::nan("") : static_cast<double>(kNow - wait->since_ns) / kSec;
    }
  }
  return out;
}

Ages StatusAges(const shm::JobSnapshot& snap, int32_t pid) {
  Ages out;
  const nlohmann::json doc = StatusJson(snap, kNow);
  for (const auto& p : doc["processes"]) {
    if (p["pid"] != pid) continue;
    for (const auto& c : p["comms"]) {
      if (!c["waiting"].get<bool>()) continue;
      out[c["comm"]] = c["oldest_wait_ns"].is_null() ? std::nan("") : c["oldest_wait_ns"].get<double>() / kSec;
    }
  }
  return out;
}

Ages ExporterAges(const shm::JobSnapshot& snap, const std::string& rank) {
  Ages out;
  MetricsInput input;
  input.jobs = {snap};
  input.now_ns = kNow;
  for (const auto& family : BuildMetricFamilies(input).families) {
    if (family.name != "ncclwatch_comm_oldest_pending_seconds") continue;
    for (const auto& m : family.metric) {
      std::string comm, its_rank;
      for (const auto& l : m.label) {
        if (l.name == "comm") comm = l.value;
        if (l.name == "rank") its_rank = l.value;
      }
      if (its_rank == rank && m.gauge.value != 0) out[comm] = m.gauge.value;
    }
  }
  return out;
}

void CheckSame(const Ages& a, const Ages& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [comm, age] : a) {
    INFO("comm " << comm);
    REQUIRE(b.count(comm) == 1);
    if (std::isnan(age)) {
      CHECK(std::isnan(b.at(comm)));
    } else {
      CHECK(b.at(comm) == Approx(age));
    }
  }
}

TEST_CASE("the watchdog, status --json and the exporter agree on what is pending and for how long", "[pending]") {
  const shm::JobSnapshot snap = MixedJob();
  const Ages watchdog = WatchdogAges(snap, 4242);
  // The expected judgement, once: #4 in flight for 96 s; the untracked pair is no wait; the
  // op seen done completes the one before it; the Send for 10 s; the aged-out ops unknown.
  REQUIRE(watchdog.size() == 3);
  CHECK(watchdog.at("0xa") == Approx(96.0));
  CHECK(watchdog.at("0xd") == Approx(10.0));
  CHECK(std::isnan(watchdog.at("0xe")));
  CheckSame(watchdog, StatusAges(snap, 4242));
  CheckSame(watchdog, ExporterAges(snap, "0"));
  CHECK(WatchdogAges(snap, 4243).empty());
  CHECK(StatusAges(snap, 4243).empty());
  CHECK(ExporterAges(snap, "1").empty());
}

}  // namespace
}  // namespace ncclwatch::tools
