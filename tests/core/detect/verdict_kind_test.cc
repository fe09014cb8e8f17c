#include <catch2/catch.hpp>

#include "core/detect/verdict.h"

namespace ncclwatch::detect {
namespace {

TEST_CASE("every verdict kind has a stable lowercase name that parses back", "[kind]") {
  const std::vector<std::pair<VerdictKind, std::string>> expected = {
      {VerdictKind::kStraggler, "straggler"},
      {VerdictKind::kMismatch, "mismatch"},
      {VerdictKind::kCollectiveHang, "collective_hang"},
      {VerdictKind::kInitHang, "init_hang"},
      {VerdictKind::kSyncStuck, "sync_stuck"},
      {VerdictKind::kRankExited, "rank_exited"},
      {VerdictKind::kP2PMismatch, "p2p_mismatch"},
      {VerdictKind::kP2PDeadlock, "p2p_deadlock"},
      {VerdictKind::kP2PStraggler, "p2p_straggler"},
      {VerdictKind::kP2PHang, "p2p_hang"},
      {VerdictKind::kStaleUniqueId, "stale_unique_id"},
      {VerdictKind::kReplayStraggler, "replay_straggler"},
      {VerdictKind::kReplayHang, "replay_hang"},
      {VerdictKind::kNone, "none"},
      {VerdictKind::kUnknown, "unknown"},
  };
  for (const auto& [kind, name] : expected) {
    CHECK(ToString(kind) == name);
    REQUIRE(ParseVerdictKind(name).has_value());
    CHECK(*ParseVerdictKind(name) == kind);
  }
}

TEST_CASE("a graph's replays are judged after their collective twins", "[kind]") {
  CHECK(Priority(VerdictKind::kStraggler) < Priority(VerdictKind::kReplayStraggler));
  CHECK(Priority(VerdictKind::kReplayStraggler) < Priority(VerdictKind::kCollectiveHang));
  CHECK(Priority(VerdictKind::kCollectiveHang) < Priority(VerdictKind::kReplayHang));
  CHECK(Priority(VerdictKind::kReplayHang) < Priority(VerdictKind::kSyncStuck));
  CHECK(IsReplayKind(VerdictKind::kReplayStraggler));
  CHECK(IsReplayKind(VerdictKind::kReplayHang));
  CHECK_FALSE(IsReplayKind(VerdictKind::kStraggler));
}

TEST_CASE("unknown verdict names do not parse", "[kind]") {
  CHECK_FALSE(ParseVerdictKind("Straggler").has_value());
  CHECK_FALSE(ParseVerdictKind("hang").has_value());
  CHECK_FALSE(ParseVerdictKind("").has_value());
}

TEST_CASE("priority follows mismatch > rank_exited > init_hang > straggler > "
          "collective_hang > sync_stuck", "[kind]") {
  CHECK(Priority(VerdictKind::kMismatch) < Priority(VerdictKind::kRankExited));
  CHECK(Priority(VerdictKind::kRankExited) < Priority(VerdictKind::kInitHang));
  CHECK(Priority(VerdictKind::kInitHang) < Priority(VerdictKind::kStraggler));
  CHECK(Priority(VerdictKind::kStraggler) < Priority(VerdictKind::kCollectiveHang));
  CHECK(Priority(VerdictKind::kCollectiveHang) < Priority(VerdictKind::kSyncStuck));
}

TEST_CASE("a stale unique id comes before every kind of wait it causes", "[kind]") {
  CHECK(Priority(VerdictKind::kMismatch) < Priority(VerdictKind::kStaleUniqueId));
  CHECK(Priority(VerdictKind::kStaleUniqueId) < Priority(VerdictKind::kRankExited));
  CHECK(Priority(VerdictKind::kStaleUniqueId) < Priority(VerdictKind::kInitHang));
}

TEST_CASE("P2P kinds: mismatch first, a deadlock before stragglers, a hang after them", "[kind]") {
  CHECK(Priority(VerdictKind::kP2PMismatch) < Priority(VerdictKind::kRankExited));
  CHECK(Priority(VerdictKind::kP2PDeadlock) < Priority(VerdictKind::kStraggler));
  CHECK(Priority(VerdictKind::kP2PStraggler) < Priority(VerdictKind::kCollectiveHang));
  CHECK(Priority(VerdictKind::kP2PHang) < Priority(VerdictKind::kSyncStuck));
  CHECK(Priority(VerdictKind::kCollectiveHang) < Priority(VerdictKind::kP2PHang));
}

}  // namespace
}  // namespace ncclwatch::detect
