#include <catch2/catch.hpp>

#include "core/watch/incident_grouping.h"

using namespace ncclwatch;

namespace {

constexpr uint64_t kSec = 1'000'000'000ull;

detect::Verdict MakeVerdict(detect::VerdictKind kind, uint64_t comm, int nranks, uint64_t since_ns) {
  detect::Verdict v;
  v.kind = kind;
  v.comm_hash = comm;
  v.nranks = nranks;
  v.seq = 21;
  v.op = "AllReduce";
  v.since_ns = since_ns;
  return v;
}

}  // namespace

TEST_CASE("verdicts of one poll form one incident led by the most important one", "[grouping]") {
  watch::IncidentGrouper grouper;
  auto tp_hang = MakeVerdict(detect::VerdictKind::kCollectiveHang, 0x7797, 2, 100 * kSec);
  auto tp_straggler = MakeVerdict(detect::VerdictKind::kStraggler, 0x375a, 2, 100 * kSec);
  auto world_straggler = MakeVerdict(detect::VerdictKind::kStraggler, 0xda74, 4, 101 * kSec);
  watch::GroupedVerdicts g = grouper.Group({tp_hang, tp_straggler, world_straggler}, 106 * kSec);
  REQUIRE(g.incidents.size() == 1);
  CHECK(g.incidents[0].primary.comm_hash == 0xda74);  // straggler before hang, then the larger comm
  REQUIRE(g.incidents[0].related.size() == 2);
  CHECK(g.incidents[0].related[0].comm_hash == 0x375a);
  CHECK(g.incidents[0].related[1].comm_hash == 0x7797);
  CHECK(g.late_related.empty());
}

TEST_CASE("a later verdict that began before the incident was declared is related to it", "[grouping]") {
  watch::IncidentGrouper grouper;
  grouper.Group({MakeVerdict(detect::VerdictKind::kStraggler, 0xda74, 4, 100 * kSec)}, 106 * kSec);
  watch::GroupedVerdicts g =
      grouper.Group({MakeVerdict(detect::VerdictKind::kCollectiveHang, 0x7797, 2, 105 * kSec)}, 107 * kSec);
  CHECK(g.incidents.empty());
  REQUIRE(g.late_related.size() == 1);
  CHECK(g.late_related[0].comm_hash == 0x7797);
}

TEST_CASE("a verdict that began after the last incident was declared is a new incident", "[grouping]") {
  watch::IncidentGrouper grouper;
  grouper.Group({MakeVerdict(detect::VerdictKind::kStraggler, 0xda74, 4, 100 * kSec)}, 106 * kSec);
  watch::GroupedVerdicts g =
      grouper.Group({MakeVerdict(detect::VerdictKind::kMismatch, 0xda74, 4, 300 * kSec)}, 300 * kSec);
  REQUIRE(g.incidents.size() == 1);
  CHECK(g.incidents[0].primary.kind == detect::VerdictKind::kMismatch);
  CHECK(g.incidents[0].related.empty());
  CHECK(grouper.Group({}, 301 * kSec).incidents.empty());
}

TEST_CASE("related verdicts are named briefly", "[grouping]") {
  auto v = MakeVerdict(detect::VerdictKind::kCollectiveHang, 0x7797d1b263002d4bull, 2, 0);
  CHECK(watch::ShortName(v) == "collective_hang comm 0x7797d1b263002d4b #21 AllReduce");
}
