#include "core/watch/dump_policy.h"

#include <catch2/catch.hpp>

#include "core/watch/incident_id.h"

namespace ncclwatch::watch {
namespace {

TEST_CASE("an incident is claimed once", "[policy]") {
  DumpPolicy policy;
  CHECK(policy.Claim("a"));
  CHECK_FALSE(policy.Claim("a"));
  CHECK(policy.Dumped("a"));
  CHECK(policy.Claim("b"));
}

TEST_CASE("the oldest ids are forgotten beyond capacity", "[policy]") {
  DumpPolicy policy(2);
  CHECK(policy.Claim("a"));
  CHECK(policy.Claim("b"));
  CHECK(policy.Claim("c"));
  CHECK_FALSE(policy.Dumped("a"));
  CHECK(policy.Dumped("b"));
  CHECK(policy.Dumped("c"));
}

TEST_CASE("incident ids depend only on what every rank agrees on", "[policy]") {
  detect::Verdict a;
  a.kind = detect::VerdictKind::kStraggler;
  a.comm_hash = 0x6a2f01c9e35b7d10ull;
  a.seq = 7;
  a.culprit_ranks = {2};
  a.since_ns = 123;
  detect::Verdict b = a;
  b.culprit_ranks = {1, 2};  // another host may blame differently
  b.since_ns = 456;
  b.summary = "other words";
  CHECK(IncidentIdOf(a) == "straggler-0x6a2f01c9e35b7d10-7");
  CHECK(IncidentIdOf(a) == IncidentIdOf(b));
  detect::Verdict later = a;
  later.seq = 8;
  CHECK(IncidentIdOf(later) != IncidentIdOf(a));
  detect::Verdict other_kind = a;
  other_kind.kind = detect::VerdictKind::kCollectiveHang;
  CHECK(IncidentIdOf(other_kind) != IncidentIdOf(a));
}

TEST_CASE("sync_stuck ids name the process and the block", "[policy]") {
  detect::Verdict v;
  v.kind = detect::VerdictKind::kSyncStuck;
  v.subject_pid = 42;
  v.since_ns = 99;
  CHECK(IncidentIdOf(v) == "sync_stuck-42-99");
}

}  // namespace
}  // namespace ncclwatch::watch
