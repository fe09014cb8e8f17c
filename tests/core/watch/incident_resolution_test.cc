#include "core/watch/incident_resolution.h"

#include <catch2/catch.hpp>

#include "core/shm/record_flags.h"
#include "core/watch/facts_from_snapshot.h"

#include "snapshot_builder.h"

namespace ncclwatch::watch {
namespace {

// The watchdog judges the facts its poll built from the snapshot.
bool Resolved(const IncidentKey& key, const shm::JobSnapshot& snapshot, pid_t self) {
  return IncidentKeyResolved(key, FactsFromSnapshot(snapshot), self);
}

using testing::Process;
using testing::ReadyComm;

constexpr uint64_t kComm = 0xabc;
constexpr int kSelf = 100;
constexpr int kPeer = 101;

detect::Verdict VerdictOf(const std::string& kind, uint64_t seq) {
  detect::Verdict v;
  v.kind = detect::ParseVerdictKind(kind).value_or(detect::VerdictKind::kUnknown);
  v.comm_hash = kComm;
  v.seq = seq;
  v.op = seq ? "AllReduce" : "init";
  return v;
}

IncidentKey KeyOf(const std::string& kind, uint64_t seq, const std::string& id = "x") {
  const std::optional<IncidentKey> key = IncidentKeyOf(VerdictOf(kind, seq), id);
  REQUIRE(key.has_value());
  return *key;
}

// This process (rank 0) and a peer (rank 1), each with the communicator at (issued, completed).
shm::JobSnapshot TwoRanks(uint64_t mine_completed, uint64_t peer_completed, uint64_t issued = 4) {
  shm::JobSnapshot s;
  s.processes.push_back(Process(kSelf, 0));
  s.processes.back().comms.push_back(ReadyComm(kComm, 0, 2, issued, mine_completed));
  s.processes.push_back(Process(kPeer, 1));
  s.processes.back().comms.push_back(ReadyComm(kComm, 1, 2, issued, peer_completed));
  return s;
}

TEST_CASE("a hung or straggling collective resolves once it completes on this process's ranks", "[resolution]") {
  for (const char* kind : {"collective_hang", "straggler", "rank_exited"}) {
    INFO(kind);
    const IncidentKey key = KeyOf(kind, 4);
    CHECK_FALSE(Resolved(key, TwoRanks(3, 3), kSelf));
    CHECK(Resolved(key, TwoRanks(4, 3), kSelf));  // judged on our own rank
    CHECK_FALSE(Resolved(key, TwoRanks(3, 4), kSelf));
    CHECK(Resolved(key, TwoRanks(6, 6, 6), kSelf));  // and later ones
  }
}

TEST_CASE("completion is the detector's: a captured collective does not hold it back", "[resolution]") {
  shm::JobSnapshot s = TwoRanks(3, 3);
  CHECK_FALSE(Resolved(KeyOf("collective_hang", 4), s, kSelf));
  s.processes[0].comms[0].records[3].flags = shm::kRecordCaptured;  // #4 will never be seen complete
  CHECK(Resolved(KeyOf("collective_hang", 4), s, kSelf));
}

TEST_CASE("a process holding no rank of the communicator judges by the others on its host", "[resolution]") {
  const IncidentKey key = KeyOf("collective_hang", 4);
  CHECK(Resolved(key, TwoRanks(4, 4), 555));
  CHECK_FALSE(Resolved(key, TwoRanks(4, 3), 555));
  shm::JobSnapshot none;
  none.processes.push_back(Process(kSelf, 0));
  CHECK_FALSE(Resolved(key, none, kSelf));  // nothing seen: not resolved
}

TEST_CASE("an aborted communicator that never completed #N is not resolved", "[resolution]") {
  shm::JobSnapshot s = TwoRanks(3, 3);
  s.processes[0].comms[0].state = shm::CommState::kAborted;
  CHECK_FALSE(Resolved(KeyOf("collective_hang", 4), s, kSelf));
  s.processes[0].comms[0].state = shm::CommState::kDestroyed;
  s.processes[0].comms[0].last_completed_seq = 4;
  CHECK(Resolved(KeyOf("collective_hang", 4), s, kSelf));  // finished, then destroyed
}

TEST_CASE("init_hang resolves when init finished, not when it failed", "[resolution]") {
  shm::JobSnapshot s = TwoRanks(0, 0, 0);
  const IncidentKey key = KeyOf("init_hang", 0);
  CHECK(Resolved(key, s, kSelf));
  s.processes[0].comms[0].state = shm::CommState::kInitializing;
  CHECK_FALSE(Resolved(key, s, kSelf));
  s.processes[0].comms[0].state = shm::CommState::kInitFailed;
  CHECK_FALSE(Resolved(key, s, kSelf));
}

TEST_CASE("sync_stuck resolves when the sync that began at the onset returns", "[resolution]") {
  const IncidentKey key = KeyOf("sync_stuck", 0, "sync_stuck-100-5000");
  CHECK(key.pid == kSelf);
  CHECK(key.since_ns == 5000);
  shm::JobSnapshot s = TwoRanks(4, 4);
  shm::SyncView sync;
  sync.blocked_since_ns = 5000;
  s.processes[0].sync_slots.push_back(sync);
  CHECK_FALSE(Resolved(key, s, kSelf));
  s.processes[0].sync_slots[0].blocked_since_ns = 9000;  // a later sync of the same thread
  CHECK(Resolved(key, s, kSelf));
  s.processes.erase(s.processes.begin());
  CHECK_FALSE(Resolved(key, s, kPeer));  // the process is gone: unknown
}

TEST_CASE("mismatches and malformed keys never resolve", "[resolution]") {
  CHECK_FALSE(IncidentKeyOf(VerdictOf("mismatch", 4), "x").has_value());
  CHECK_FALSE(IncidentKeyOf(VerdictOf("none", 0), "x").has_value());
  CHECK_FALSE(IncidentKeyOf(VerdictOf("bogus", 4), "x").has_value());
  CHECK_FALSE(IncidentKeyOf(VerdictOf("collective_hang", 0), "x").has_value());
  for (const char* id : {"sync_stuck-", "sync_stuck-12", "sync_stuck-x-5", "sync_stuck-12-", "sync_stuck-0-5",
                         "sync_stuck-12-5x", "straggler-12-5", "sync_stuck-99999999999-5"}) {
    INFO(id);
    CHECK_FALSE(IncidentKeyOf(VerdictOf("sync_stuck", 0), id).has_value());
  }
}

}  // namespace
}  // namespace ncclwatch::watch
