// What the detector may claim when only some ranks of a communicator are on this host,
// and how it keeps communicators sharing processes apart.
#include <catch2/catch.hpp>

#include "core/detect/detector.h"
#include "core/format/rank_list.h"
#include "tests/core/detect/view_builder.h"

namespace ncclwatch::detect {
namespace {

using namespace ncclwatch::detect::testing;
using Ranks = std::vector<int>;

constexpr uint64_t kComm = 0xBEEF;
const DetectConfig kConfig;

// Ranks 4..7 of an 8-rank communicator live on this host (processes 0..3).
JobFacts SecondHostOfTwo(uint64_t last_done) {
  JobFacts view = HealthyJob(kComm, 4, last_done);
  for (int i = 0; i < 4; ++i) {
    CommOf(view, i).rank = 4 + i;
    CommOf(view, i).nranks = 8;
  }
  return view;
}

bool AnyNoteContains(const Verdict& verdict, const std::string& text) {
  for (const std::string& note : verdict.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("partial view: all visible ranks joined, no completion -> collective_hang that "
          "points at remote ranks", "[visibility]") {
  JobFacts view = SecondHostOfTwo(20);
  for (int i = 0; i < 4; ++i) Issue(CommOf(view, i), 21, 100 * kSec);

  CHECK(Classify(view, kConfig, 130 * kSec).empty());  // in flight, young: healthy

  std::vector<Verdict> verdicts = Classify(view, kConfig, 161 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kCollectiveHang);
  CHECK(v.partial);
  CHECK(v.nranks == 8);
  CHECK(v.seq == 21);
  // Every rank here joined: none of them is blamed; the verdict names the remote ranks.
  CHECK(v.culprit_ranks.empty());
  CHECK(v.other_ranks == Ranks{4, 5, 6, 7});
  CHECK(format::FormatRangeList(v.culprits_without_facts) == "0-3");
  CHECK(v.summary.find("wait on ranks 0-3 on other hosts") != std::string::npos);
  CHECK(AnyNoteContains(v, "other hosts"));
  CHECK(AnyNoteContains(v, "4 of 8 ranks visible"));
}

TEST_CASE("partial view: every visible rank still in init -> init_hang waiting on the remote ranks",
          "[visibility]") {
  JobFacts view = SecondHostOfTwo(0);
  for (int i = 0; i < 4; ++i) {
    CommOf(view, i).init_started_ns = 5 * kSec;
    CommOf(view, i).init_done_ns = 0;
  }
  std::vector<Verdict> verdicts = Classify(view, kConfig, 70 * kSec);
  REQUIRE(verdicts.size() == 1);
  const Verdict& v = verdicts[0];
  CHECK(v.kind == VerdictKind::kInitHang);
  CHECK(v.culprit_ranks.empty());
  CHECK(v.other_ranks == Ranks{4, 5, 6, 7});
  CHECK(format::FormatRangeList(v.culprits_without_facts) == "0-3");

  // One rank here finished its init and another did not: the one here is named.
  CommOf(view, 0).init_done_ns = 6 * kSec;
  verdicts = Classify(view, kConfig, 70 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].culprit_ranks == Ranks{5, 6, 7});
  CHECK(verdicts[0].culprits_without_facts.empty());
}

TEST_CASE("partial view: a straggler is named only among visible ranks", "[visibility]") {
  JobFacts view = SecondHostOfTwo(20);
  for (int i : {0, 1, 3}) Issue(CommOf(view, i), 21, 100 * kSec);
  std::vector<Verdict> verdicts = Classify(view, kConfig, 161 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kStraggler);
  CHECK(verdicts[0].partial);
  CHECK(verdicts[0].culprit_ranks == Ranks{6});
  CHECK(verdicts[0].other_ranks == Ranks{4, 5, 7});
}

TEST_CASE("lone rank: needs both the threshold and lone_rank_factor x its cadence",
          "[visibility]") {
  JobFacts view;
  ProcessFacts process = MakeProcess(4242, 3);
  CommFacts comm = MakeComm(kComm, 3, 8);

  SECTION("fast cadence: the threshold decides") {
    History(comm, 1, 40, 10 * kSec, 1 * kSec);  // one collective per second
    Issue(comm, 41, 100 * kSec);
    process.comms.push_back(comm);
    view.processes.push_back(process);
    CHECK(Classify(view, kConfig, 159 * kSec).empty());
    std::vector<Verdict> verdicts = Classify(view, kConfig, 161 * kSec);
    REQUIRE(verdicts.size() == 1);
    CHECK(verdicts[0].kind == VerdictKind::kCollectiveHang);
    CHECK(verdicts[0].partial);
    CHECK(verdicts[0].seq == 41);
    CHECK(verdicts[0].culprit_ranks.empty());
    CHECK(verdicts[0].other_ranks == Ranks{3});
    CHECK(format::FormatRangeList(verdicts[0].culprits_without_facts) == "0-2,4-7");
    CHECK(AnyNoteContains(verdicts[0], "only rank 3 of 8"));
  }
  SECTION("slow cadence: 10 x the median interval decides") {
    History(comm, 1, 20, 10 * kSec, 20 * kSec);  // one collective per 20 s
    Issue(comm, 21, 1000 * kSec);
    process.comms.push_back(comm);
    view.processes.push_back(process);
    CHECK(Classify(view, kConfig, 1100 * kSec).empty());   // 100 s < 200 s
    std::vector<Verdict> verdicts = Classify(view, kConfig, 1201 * kSec);
    REQUIRE(verdicts.size() == 1);
    CHECK(verdicts[0].kind == VerdictKind::kCollectiveHang);
  }
}

TEST_CASE("split communicator: only the stalled one of two comms is named", "[visibility]") {
  constexpr uint64_t kWorld = 0x1111;
  constexpr uint64_t kChild = 0x2222;
  JobFacts view = HealthyJob(kWorld, 4, 80);
  for (int rank = 0; rank < 4; ++rank) {
    CommFacts child = MakeComm(kChild, rank % 2, 2);  // color = rank / 2
    child.comm_hash = kChild + static_cast<uint64_t>(rank / 2);
    History(child, 1, 30, 20 * kSec, 1 * kSec);
    view.processes[rank].comms.push_back(child);
  }
  // The child comm of ranks {2,3} stalls: rank 3 never joins its #31.
  Issue(CommOf(view, 2, 1), 31, 100 * kSec);

  std::vector<Verdict> verdicts = Classify(view, kConfig, 161 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kStraggler);
  CHECK(verdicts[0].comm_hash == kChild + 1);
  CHECK(verdicts[0].seq == 31);
  CHECK(verdicts[0].culprit_ranks == Ranks{1});  // rank 1 of the child: global rank 3
  CHECK(verdicts[0].rank_evidence[1].global_rank == 3);
  CHECK(verdicts[0].rank_evidence[1].pid == 1003);
}

TEST_CASE("several ranks of one communicator in one process count as visible ranks",
          "[visibility]") {
  JobFacts view;
  ProcessFacts process = MakeProcess(77, -1);
  for (int rank = 0; rank < 2; ++rank) {
    CommFacts comm = MakeComm(kComm, rank, 2);
    History(comm, 1, 9, 10 * kSec, kSec);
    process.comms.push_back(comm);
  }
  Issue(process.comms[0], 10, 100 * kSec);
  view.processes.push_back(process);
  std::vector<Verdict> verdicts = Classify(view, kConfig, 161 * kSec);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].kind == VerdictKind::kStraggler);
  CHECK_FALSE(verdicts[0].partial);
  CHECK(verdicts[0].culprit_ranks == Ranks{1});
}

}  // namespace
}  // namespace ncclwatch::detect
