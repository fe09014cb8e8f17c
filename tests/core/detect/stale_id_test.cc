// stale_unique_id (core/detect/stale_id_rule.h): ranks that initialise a communicator from a
// used unique id are named, with the proof of the earlier use and the communicator their peers
// initialise instead, never as an init hang of one rank; communicators whose ids legitimately
// meet again (a shrink's, ranks still leaving an init together) are not.
#include <catch2/catch.hpp>

#include "core/detect/detector.h"
#include "tests/core/detect/view_builder.h"

namespace ncclwatch::detect {
namespace {

using namespace ncclwatch::detect::testing;
using Ranks = std::vector<int>;

constexpr uint64_t kOld = 0x01D;
constexpr uint64_t kNew = 0x0E1;
const DetectConfig kConfig;  // 60 s threshold, 500 ms polls: 1 s of grace

// A communicator this rank is initialising since `started`.
CommFacts InInit(uint64_t hash, int rank, int nranks, uint64_t started) {
  CommFacts comm = MakeComm(hash, rank, nranks);
  comm.init_started_ns = started;
  comm.init_done_ns = 0;
  comm.name = "0";
  return comm;
}

// A communicator this rank initialised over [started, done], used for #1..#3, then left.
CommFacts UsedAndLeft(uint64_t hash, int rank, int nranks, uint64_t started, uint64_t done) {
  CommFacts comm = MakeComm(hash, rank, nranks);
  comm.init_started_ns = started;
  comm.init_done_ns = done;
  comm.name = "0";
  History(comm, 1, 3, done + kSec, kSec);
  comm.lifecycle = CommLifecycle::kDestroyed;
  return comm;
}

bool Mentions(const Verdict& verdict, const std::string& text) {
  if (verdict.summary.find(text) != std::string::npos) return true;
  for (const std::string& note : verdict.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

// The default group destroyed and created again in the same two processes: rank 0 (the root)
// initialises a new communicator, rank 1 the one both just destroyed (it read the old id).
JobFacts ReinitRace(uint64_t restart_at) {
  JobFacts view;
  for (int rank : {0, 1}) {
    ProcessFacts process = MakeProcess(1000 + rank, rank);
    process.comms.push_back(UsedAndLeft(kOld, rank, 2, 10 * kSec, 11 * kSec));
    process.comms.push_back(InInit(rank == 0 ? kNew : kOld, rank, 2, restart_at + rank * kMs));
    view.processes.push_back(process);
  }
  return view;
}

TEST_CASE("stale_unique_id: a re-created group's rank that reads the old id, after two polls", "[stale]") {
  const uint64_t restart = 20 * kSec;
  const JobFacts view = ReinitRace(restart);
  CHECK(Classify(view, kConfig, restart + 500 * kMs).empty());  // within the grace: nothing yet

  const std::vector<Verdict> verdicts = Classify(view, kConfig, restart + 2 * kSec);
  REQUIRE(verdicts.size() == 1);  // the new communicator's wait is the same incident
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kStaleUniqueId);
  CHECK(v.comm_hash == kOld);
  CHECK(v.op == "init");
  CHECK(v.seq == 0);
  CHECK(v.culprit_ranks == Ranks{1});
  CHECK(v.other_ranks == Ranks{0});
  CHECK(v.explained_comms == std::vector<uint64_t>{kNew});
  CHECK(v.since_ns == restart + 1 * kMs);
  CHECK(Mentions(v, "this process initialised it before (rank 1) and left it"));
  CHECK(Mentions(v, "rank 0 initialises comm 0xe1 instead"));
  CHECK(Mentions(v, "likely cause"));

  // Past the init threshold it is still the stale id, never an init hang of either rank.
  const std::vector<Verdict> later = Classify(view, kConfig, restart + 120 * kSec);
  REQUIRE(later.size() == 1);
  CHECK(later[0].kind == VerdictKind::kStaleUniqueId);
}

TEST_CASE("stale_unique_id: offline, the same facts give the same verdict", "[stale]") {
  JobFacts view = ReinitRace(20 * kSec);
  view.scope = Scope::kJob;
  const std::vector<Verdict> verdicts = Classify(view, kConfig, 0);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kStaleUniqueId);
  CHECK(verdicts[0].culprit_ranks == Ranks{1});
}

TEST_CASE("stale_unique_id: a torchrun restart's rank that reads the attempt before's id", "[stale]") {
  JobFacts view;
  for (int rank : {0, 1}) {  // attempt 0: used kOld, then rank 1 raised and rank 0 was stopped
    ProcessFacts gone = MakeProcess(1000 + rank, rank);
    gone.attempt.restart = 0;
    gone.alive = false;
    CommFacts comm = MakeComm(kOld, rank, 2);
    comm.name = "0";
    History(comm, 1, 6, 10 * kSec, kSec);
    gone.comms.push_back(comm);
    view.processes.push_back(gone);
  }
  for (int rank : {0, 1}) {  // attempt 1: new processes, rank 1 read attempt 0's id
    ProcessFacts process = MakeProcess(2000 + rank, rank);
    process.attempt.restart = 1;
    process.comms.push_back(InInit(rank == 0 ? kNew : kOld, rank, 2, 30 * kSec));
    view.processes.push_back(process);
  }
  const std::vector<Verdict> verdicts = Classify(view, kConfig, 120 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kStaleUniqueId);
  CHECK(v.comm_hash == kOld);
  CHECK(v.culprit_ranks == Ranks{1});
  CHECK(v.other_ranks == Ranks{0});
  CHECK(Mentions(v, "attempt 0 of the job used it: pid 1000 (rank 0)"));
}

TEST_CASE("stale_unique_id: a process that initialised the id and exited before this init began", "[stale]") {
  JobFacts view;
  ProcessFacts gone = MakeProcess(1000, 0);  // no attempt numbers: a launcher that gives none
  gone.alive = false;
  gone.exit.recorded = true;
  gone.exit.exit_ns = 25 * kSec;
  gone.comms.push_back(MakeComm(kOld, 0, 2));
  view.processes.push_back(gone);
  ProcessFacts late = MakeProcess(2000, 1);
  late.comms.push_back(InInit(kOld, 1, 2, 30 * kSec));
  view.processes.push_back(late);
  const std::vector<Verdict> verdicts = Classify(view, kConfig, 40 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kStaleUniqueId);
  CHECK(Mentions(verdicts[0], "pid 1000 (rank 0) initialised it and exited before this init began"));

  // Exited after this init began: an ordinary init that lost a rank, judged as before.
  view.processes[0].exit.exit_ns = 35 * kSec;
  const std::vector<Verdict> ordinary = Classify(view, kConfig, 100 * kSec);
  REQUIRE(ordinary.size() == 1);
  CHECK(ordinary[0].kind == VerdictKind::kInitHang);
}

TEST_CASE("stale_unique_id: never for ids that legitimately meet again", "[stale]") {
  SECTION("a peer that finished the same init moments ago, before the grace") {
    JobFacts view;
    ProcessFacts done = MakeProcess(1000, 0);
    CommFacts comm = MakeComm(kNew, 0, 2);
    comm.init_started_ns = 30 * kSec;
    comm.init_done_ns = 30 * kSec + 400 * kMs;
    done.comms.push_back(comm);
    view.processes.push_back(done);
    ProcessFacts joining = MakeProcess(1001, 1);
    joining.comms.push_back(InInit(kNew, 1, 2, 30 * kSec));
    view.processes.push_back(joining);
    CHECK(Classify(view, kConfig, 30 * kSec + 500 * kMs).empty());
  }
  SECTION("two shrinks of one parent share a hash") {
    JobFacts view = ReinitRace(20 * kSec);
    for (ProcessFacts& process : view.processes) {
      for (CommFacts& comm : process.comms) comm.derived = true;
    }
    for (const Verdict& v : Classify(view, kConfig, 22 * kSec)) CHECK(v.kind != VerdictKind::kStaleUniqueId);
  }
  SECTION("ranks of one process initialising one id together (a group init of two devices)") {
    JobFacts view;
    ProcessFacts process = MakeProcess(1000, -1);
    process.comms.push_back(InInit(kNew, 0, 2, 30 * kSec));
    process.comms.push_back(InInit(kNew, 1, 2, 30 * kSec));
    view.processes.push_back(process);
    CHECK(Classify(view, kConfig, 40 * kSec).empty());
  }
  SECTION("a healthy restart: attempt 1 initialises a new id") {
    JobFacts view;
    ProcessFacts gone = MakeProcess(1000, 0);
    gone.attempt.restart = 0;
    gone.alive = false;
    gone.comms.push_back(MakeComm(kOld, 0, 2));
    view.processes.push_back(gone);
    ProcessFacts process = MakeProcess(2000, 0);
    process.attempt.restart = 1;
    process.comms.push_back(InInit(kNew, 0, 2, 30 * kSec));
    view.processes.push_back(process);
    CHECK(Classify(view, kConfig, 40 * kSec).empty());
  }
}

}  // namespace
}  // namespace ncclwatch::detect
