// What the detector sees of the NCCL 2.29+ state the preload publishes: a suspended
// communicator is idle by request and never judged; one-sided records are per-peer
// traffic, not collectives.
#include <catch2/catch.hpp>

#include <string>

#include "core/detect/detector.h"
#include "core/watch/facts_from_snapshot.h"
#include "snapshot_builder.h"

namespace ncclwatch::watch {
namespace {

using testing::Process;
using testing::ReadyComm;
using testing::Record;

// Ranks 0 and 1 issued #3 at t = 3 s; rank 2 stopped after #2 (a straggler by t = 6 s),
// with every rank's communicator in `state`.
shm::JobSnapshot StragglerIn(shm::CommState state) {
  shm::JobSnapshot snap;
  for (int r = 0; r < 3; ++r) {
    shm::ProcessView p = Process(100 + r, r);
    p.comms.push_back(ReadyComm(0xfeed, r, 3, r == 2 ? 2 : 3, 2));
    p.comms.back().state = state;
    snap.processes.push_back(p);
  }
  return snap;
}

TEST_CASE("a suspended communicator is not judged, a resumed one is", "[reach]") {
  detect::DetectConfig config;
  config.stall_threshold_ns = 2 * detect::kNsPerSec;
  const uint64_t now = 6 * detect::kNsPerSec;
  const detect::JobFacts view = FactsFromSnapshot(StragglerIn(shm::CommState::kSuspended));
  for (const auto& p : view.processes) {
    REQUIRE(p.comms.size() == 1);  // kept as evidence, never judged
    CHECK_FALSE(p.comms[0].judged());
  }
  CHECK(detect::Classify(view, config, now).empty());
  const auto resumed = detect::Classify(FactsFromSnapshot(StragglerIn(shm::CommState::kReady)), config, now);
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].kind == detect::VerdictKind::kStraggler);
  CHECK(resumed[0].culprit_ranks == std::vector<int>{2});
}

TEST_CASE("one-sided records are per-peer traffic, not collectives", "[reach]") {
  for (shm::Op op : {shm::Op::kPutSignal, shm::Op::kSignal, shm::Op::kWaitSignal}) {
    shm::CommView c = ReadyComm(0xabc, 0, 2, 1, 1);
    shm::RecordView r = Record(1, op, 5);
    r.root_or_peer = 1;
    c.records.push_back(r);
    const detect::CommFacts v = CommFactsFromSnapshot(c);
    REQUIRE(v.records.size() == 1);
    CHECK(v.records[0].op == "AllReduce");
  }
  CHECK(shm::IsSendLike(shm::Op::kPutSignal));
  CHECK(shm::IsSendLike(shm::Op::kSignal));
  CHECK_FALSE(shm::IsSendLike(shm::Op::kWaitSignal));
  CHECK(std::string(shm::OpName(shm::Op::kWaitSignal)) == "WaitSignal");
}

}  // namespace
}  // namespace ncclwatch::watch
