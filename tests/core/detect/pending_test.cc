// core/detect/pending.h: the one judgement of what a rank has pending, and that the rules
// leave a suspended communicator and a failed init alone.
#include "core/detect/pending.h"

#include <catch2/catch.hpp>

#include "core/detect/detector.h"
#include "tests/core/detect/view_builder.h"

namespace ncclwatch::detect {
namespace {

using namespace ncclwatch::detect::testing;

constexpr uint64_t kComm = 0xBEEF;

TEST_CASE("the in-flight collective is the first one not complete, tracked or not", "[pending]") {
  CommFacts comm = MakeComm(kComm, 0, 2);
  History(comm, 1, 9, 10 * kSec, kSec);
  CHECK(InFlightSeq(comm) == 0);
  CHECK_FALSE(WaitsOnCollective(comm));
  Issue(comm, 10, 30 * kSec);
  Issue(comm, 11, 31 * kSec);
  CHECK(InFlightSeq(comm) == 10);
  REQUIRE(InFlightCollective(comm) != nullptr);
  CHECK(InFlightCollective(comm)->enqueue_ns == 30 * kSec);
  CHECK(WaitsOnCollective(comm));
  const std::optional<Wait> oldest = OldestPendingOp(comm);
  REQUIRE(oldest);
  CHECK(oldest->on == Wait::On::kCollective);
  CHECK(oldest->seq == 10);
  CHECK(oldest->since_ns == 30 * kSec);
}

TEST_CASE("untracked pending collectives are no wait; a tracked one behind them is", "[pending]") {
  CommFacts comm = MakeComm(kComm, 0, 2);
  History(comm, 1, 4, 10 * kSec, kSec);
  Issue(comm, 5, 20 * kSec);
  comm.records.back().untracked = true;
  CHECK(InFlightSeq(comm) == 5);
  CHECK_FALSE(WaitsOnCollective(comm));
  CHECK_FALSE(OldestPendingOp(comm));
  Issue(comm, 6, 21 * kSec);
  CHECK(WaitsOnCollective(comm));
  REQUIRE(OldestPendingOp(comm));
  CHECK(OldestPendingOp(comm)->since_ns == 20 * kSec);  // the in-flight #5 was issued then
}

TEST_CASE("a pending collective whose record aged out waits, since unknown", "[pending]") {
  CommFacts comm = MakeComm(kComm, 0, 2);
  comm.last_enqueued_seq = 900;
  comm.last_completed_seq = 100;
  CHECK(WaitsOnCollective(comm));
  REQUIRE(OldestPendingOp(comm));
  CHECK(OldestPendingOp(comm)->since_ns == 0);
  CHECK(OldestPendingOp(comm)->op == nullptr);
}

TEST_CASE("a communicator left, suspended or failed has nothing pending", "[pending]") {
  for (CommLifecycle lifecycle : {CommLifecycle::kDestroyed, CommLifecycle::kAborted, CommLifecycle::kSuspended,
                                  CommLifecycle::kInitFailed, CommLifecycle::kFinalized, CommLifecycle::kRevoked}) {
    CommFacts comm = MakeComm(kComm, 0, 2);
    Issue(comm, 1, 20 * kSec);
    comm.lifecycle = lifecycle;
    CHECK(InFlightSeq(comm) == 0);
    CHECK_FALSE(OldestPendingOp(comm));
  }
}

TEST_CASE("a P2P op is pending until seen complete, or completed by a later op of its stream", "[pending]") {
  CommFacts comm = MakeComm(kComm, 0, 2);
  RecordFacts send;
  send.seq = 1;
  send.op = "Send";
  send.peer = 1;
  send.stream = 0x10;
  send.enqueue_ns = 40 * kSec;
  comm.p2p_records.push_back(send);
  REQUIRE(OldestPendingP2P(comm) != nullptr);
  CHECK(OldestPendingOp(comm)->on == Wait::On::kP2P);
  RecordFacts later = send;
  later.seq = 2;
  later.enqueue_ns = 41 * kSec;
  later.complete_ns = 42 * kSec;
  comm.p2p_records.push_back(later);
  CHECK(OldestPendingP2P(comm) == nullptr);
}

TEST_CASE("a process's oldest wait is the earliest of its inits, ops and host syncs", "[pending]") {
  ProcessFacts process = MakeProcess(1000, 0);
  CHECK_FALSE(OldestWait(process));
  CommFacts ready = MakeComm(kComm, 0, 2);
  Issue(ready, 1, 50 * kSec);
  CommFacts initializing = MakeComm(0xC0FFEE, 0, 2);
  initializing.lifecycle = CommLifecycle::kInitializing;
  initializing.init_done_ns = 0;
  initializing.init_started_ns = 45 * kSec;
  process.comms = {ready, initializing};
  SyncFacts sync;
  sync.blocked_since_ns = 48 * kSec;
  process.syncs.push_back(sync);
  std::optional<Wait> wait = OldestWait(process);
  REQUIRE(wait);
  CHECK(wait->on == Wait::On::kInit);
  CHECK(wait->since_ns == 45 * kSec);
  process.comms.pop_back();
  wait = OldestWait(process);
  REQUIRE(wait);
  CHECK(wait->on == Wait::On::kHostSync);
  CHECK(wait->since_ns == 48 * kSec);
}

TEST_CASE("the rules never judge a suspended communicator or a failed init", "[pending]") {
  for (CommLifecycle lifecycle : {CommLifecycle::kSuspended, CommLifecycle::kInitFailed}) {
    JobFacts job = HealthyJob(kComm, 2, 9);
    Issue(CommOf(job, 0), 10, 30 * kSec);  // rank 0 waits in #10, rank 1 never issued it
    CommOf(job, 0).lifecycle = lifecycle;
    CommOf(job, 1).lifecycle = lifecycle;
    CHECK(Classify(job, DetectConfig{}, 300 * kSec).empty());
    CommOf(job, 0).lifecycle = CommLifecycle::kReady;
    CommOf(job, 1).lifecycle = CommLifecycle::kReady;
    CHECK_FALSE(Classify(job, DetectConfig{}, 300 * kSec).empty());  // the same facts, judged
  }
}

TEST_CASE("as at the abort: the ops an abort ended are pending again, its communicator ready", "[pending]") {
  ProcessFacts process = MakeProcess(1000, 0);
  CommFacts comm = MakeComm(kComm, 0, 2);
  History(comm, 1, 9, 10 * kSec, kSec);
  Issue(comm, 10, 40 * kSec, 41 * kSec);  // the abort fired its event: no completion
  comm.records.back().aborted = true;
  comm.records.back().untracked = true;
  comm.last_completed_seq = 9;
  comm.lifecycle = CommLifecycle::kAborted;
  process.comms.push_back(comm);
  CHECK_FALSE(OldestWait(process));  // after the abort: nothing pending
  const ProcessFacts before = AsAtAbort(process);
  CHECK(before.comms[0].lifecycle == CommLifecycle::kReady);
  const std::optional<Wait> wait = OldestWait(before);
  REQUIRE(wait);
  CHECK(wait->on == Wait::On::kCollective);
  CHECK(wait->seq == 10);
  CHECK(wait->since_ns == 40 * kSec);
  process.comms[0].lifecycle = CommLifecycle::kDestroyed;  // a clean destroy is left alone
  CHECK_FALSE(OldestWait(AsAtAbort(process)));
}

}  // namespace
}  // namespace ncclwatch::detect
