#include <catch2/catch.hpp>

#include "core/detect/incident_tracker.h"

namespace ncclwatch::detect {
namespace {

Verdict Make(VerdictKind kind, uint64_t comm, uint64_t seq) {
  Verdict verdict;
  verdict.kind = kind;
  verdict.comm_hash = comm;
  verdict.seq = seq;
  return verdict;
}

Verdict Stuck(int32_t pid, uint64_t since) {
  Verdict verdict = Make(VerdictKind::kSyncStuck, 0, 0);
  verdict.subject_pid = pid;
  verdict.since_ns = since;
  return verdict;
}

TEST_CASE("a persisting incident is reported once", "[incidents]") {
  IncidentTracker tracker;
  std::vector<Verdict> poll = {Make(VerdictKind::kStraggler, 0xA, 57)};
  CHECK(tracker.Observe(poll).size() == 1);
  for (int i = 0; i < 10; ++i) CHECK(tracker.Observe(poll).empty());
  CHECK(tracker.active_count() == 1);
}

TEST_CASE("a changed culprit list or summary is still the same incident", "[incidents]") {
  IncidentTracker tracker;
  Verdict first = Make(VerdictKind::kStraggler, 0xA, 57);
  first.culprit_ranks = {2, 3};
  CHECK(tracker.Observe({first}).size() == 1);
  Verdict later = first;
  later.culprit_ranks = {3};
  later.summary = "changed";
  CHECK(tracker.Observe({later}).empty());
}

TEST_CASE("another seq, kind or communicator is a new incident", "[incidents]") {
  IncidentTracker tracker;
  CHECK(tracker.Observe({Make(VerdictKind::kStraggler, 0xA, 57)}).size() == 1);
  CHECK(tracker.Observe({Make(VerdictKind::kCollectiveHang, 0xA, 57)}).size() == 1);
  CHECK(tracker.Observe({Make(VerdictKind::kCollectiveHang, 0xA, 58)}).size() == 1);
  std::vector<Verdict> both = {Make(VerdictKind::kCollectiveHang, 0xA, 58),
                               Make(VerdictKind::kCollectiveHang, 0xB, 58)};
  std::vector<Verdict> fresh = tracker.Observe(both);
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0].comm_hash == 0xB);
  CHECK(tracker.active_count() == 2);
}

TEST_CASE("resolving and returning: same seq is the same incident, another seq is new",
          "[incidents]") {
  IncidentTracker tracker;
  CHECK(tracker.Observe({Make(VerdictKind::kStraggler, 0xA, 57)}).size() == 1);
  CHECK(tracker.Observe({}).empty());
  CHECK(tracker.active_count() == 0);
  CHECK(tracker.Observe({Make(VerdictKind::kStraggler, 0xA, 57)}).empty());  // flapping
  CHECK(tracker.Observe({}).empty());
  CHECK(tracker.Observe({Make(VerdictKind::kStraggler, 0xA, 90)}).size() == 1);
}

TEST_CASE("sync_stuck incidents are per process and per blocking episode", "[incidents]") {
  IncidentTracker tracker;
  CHECK(tracker.Observe({Stuck(10, 100)}).size() == 1);
  CHECK(tracker.Observe({Stuck(10, 100)}).empty());
  CHECK(tracker.Observe({Stuck(10, 100), Stuck(11, 100)}).size() == 1);
  CHECK(tracker.Observe({Stuck(10, 500)}).size() == 1);  // unblocked, blocked again
}

TEST_CASE("bounded memory never re-reports an incident that is still active",
          "[incidents]") {
  IncidentTracker tracker(2);
  Verdict lasting = Make(VerdictKind::kCollectiveHang, 0xA, 1);
  CHECK(tracker.Observe({lasting}).size() == 1);
  for (uint64_t seq = 1; seq <= 5; ++seq) {
    std::vector<Verdict> poll = {lasting, Make(VerdictKind::kStraggler, 0xB, seq)};
    CHECK(tracker.Observe(poll).size() == 1);  // only the new straggler
  }
}

}  // namespace
}  // namespace ncclwatch::detect
