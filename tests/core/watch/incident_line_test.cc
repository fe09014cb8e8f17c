// The watchdog's log lines held to what the READMEs document: README.md's example incident
// line is read from the file itself and must come out byte for byte.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "core/watch/incident_line.h"

using namespace ncclwatch;

namespace {

constexpr uint64_t kSec = 1'000'000'000ull;

detect::Verdict MakeVerdict(detect::VerdictKind kind, uint64_t comm, uint64_t seq, const std::string& op) {
  detect::Verdict v;
  v.kind = kind;
  v.comm_hash = comm;
  v.seq = seq;
  v.op = op;
  return v;
}

detect::RankEvidence Rank(int comm_rank, int global_rank) {
  detect::RankEvidence e;
  e.comm_rank = comm_rank;
  e.global_rank = global_rank;
  return e;
}

// The first line of README.md holding `needle`, "" when there is none.
std::string ReadmeLineWith(const std::string& needle) {
  const char* source = std::getenv("NCCLWATCH_SOURCE_DIR");
  REQUIRE(source != nullptr);  // ctest sets it (tests/CMakeLists.txt)
  std::ifstream readme(std::string(source) + "/README.md");
  REQUIRE(readme.good());
  for (std::string line; std::getline(readme, line);) {
    if (line.find(needle) != std::string::npos) return line;
  }
  return "";
}

const watch::LineOrigin kOrigin{"vm", 11510, 11512, 1};

}  // namespace

TEST_CASE("the incident line is README.md's example, byte for byte", "[incident_line]") {
  const std::string documented = ReadmeLineWith(" NCCLWATCH WARN straggler ");
  REQUIRE(!documented.empty());
  detect::Verdict v = MakeVerdict(detect::VerdictKind::kStraggler, 0x2dcbbede61718efd, 23, "Broadcast");
  v.framework_seq = 23;  // ddp_loop issues no groups
  v.culprit_ranks = {2};
  v.rank_evidence = {Rank(0, 0), Rank(1, 1), Rank(2, 2), Rank(3, 3)};
  const std::string related = watch::RelatedText(
      {MakeVerdict(detect::VerdictKind::kStraggler, 0x50c7f0b087597865, 21, "AllReduce"),
       MakeVerdict(detect::VerdictKind::kCollectiveHang, 0xf34599e59d2ef07e, 21, "AllReduce")});
  CHECK(watch::IncidentLine(kOrigin, v, related, "/tmp/ncclwatch-demo.XXXX", true) == documented);
}

TEST_CASE("culprits are global ranks, with the communicator rank when it differs", "[incident_line]") {
  detect::Verdict v = MakeVerdict(detect::VerdictKind::kStraggler, 0xab, 3, "AllReduce");
  v.culprit_ranks = {1, 3};
  v.rank_evidence = {Rank(0, 4), Rank(1, 5), Rank(2, 2)};  // comm rank 3 has no facts here
  CHECK(watch::IncidentLine(kOrigin, v, "", "/d", true) ==
        "vm:11510:11512 [rank 1] NCCLWATCH WARN straggler comm 0xab #3 AllReduce culprit ranks "
        "[5 (comm rank 1),comm rank 3]; dumps in /d; next: ncclwatch analyze /d");
}

TEST_CASE("one process driving several culprit ranks is named once, with its ranks and devices", "[incident_line]") {
  detect::Verdict v = MakeVerdict(detect::VerdictKind::kStraggler, 0xabc, 7, "AllReduce");
  v.culprit_ranks = {0, 1, 3};
  for (int r = 0; r < 4; ++r) {
    detect::RankEvidence e = Rank(r, r < 2 ? 0 : r);  // ranks 0-1: one process, global rank 0
    e.pid = r < 2 ? 28891 : 30000 + r;
    e.host = "vm";
    e.device = r;
    v.rank_evidence.push_back(e);
  }
  const std::string line = watch::IncidentLine({"vm", 1, 2, 2}, v, "", "/d", true);
  CHECK(line.find("culprit ranks [process vm:28891 (rank 0) driving comm ranks 0-1, devices 0-1,3]") !=
        std::string::npos);
}

TEST_CASE("the framework's sequence number follows the op when known", "[incident_line]") {
  detect::Verdict v = MakeVerdict(detect::VerdictKind::kStraggler, 0xab, 26, "AllReduce");
  v.framework_seq = 25;
  v.culprit_ranks = {1};
  v.rank_evidence = {Rank(1, 1)};
  CHECK(watch::IncidentLine(kOrigin, v, "", "/d", true) ==
        "vm:11510:11512 [rank 1] NCCLWATCH WARN straggler comm 0xab #26 AllReduce (framework seq 25) culprit ranks "
        "[1]; dumps in /d; next: ncclwatch analyze /d");
  v.kind = detect::VerdictKind::kP2PStraggler;
  v.seq = 3;
  v.op = "Recv";
  v.framework_seq = 7;
  CHECK(watch::IncidentLine(kOrigin, v, "", "/d", true).find("#3 Recv (framework p2p seq 7) culprit") !=
        std::string::npos);
}

TEST_CASE("a replay is named as one; a mismatch at capture names its graph but waits on a #N", "[incident_line]") {
  detect::Verdict v = MakeVerdict(detect::VerdictKind::kReplayStraggler, 0xab, 58, "AllReduce");
  v.graph = 0x77;
  v.graph_label = "graph [AllReduce from #2 on comm 0xab]";
  v.culprit_ranks = {1};
  v.rank_evidence = {Rank(1, 1)};
  CHECK(watch::IncidentLine(kOrigin, v, "", "/d", true).find(
            " replay 58 of graph [AllReduce from #2 on comm 0xab] culprit ranks [1]") != std::string::npos);
  v.kind = detect::VerdictKind::kMismatch;
  v.seq = 2;
  CHECK(watch::IncidentLine(kOrigin, v, "", "/d", true).find(" comm 0xab #2 AllReduce culprit ranks [1]") !=
        std::string::npos);
}

TEST_CASE("a host whose ranks all joined names the remote ranks it waits for", "[incident_line]") {
  detect::Verdict v = MakeVerdict(detect::VerdictKind::kCollectiveHang, 0xab, 9, "AllGather");
  v.culprits_without_facts = {{4, 7}};
  CHECK(watch::IncidentLine(kOrigin, v, "", "/d", true) ==
        "vm:11510:11512 [rank 1] NCCLWATCH WARN collective_hang comm 0xab #9 AllGather waiting on "
        "comm ranks [4-7] on other hosts; dumps in /d; next: ncclwatch analyze /d");
}

TEST_CASE("a dump that failed says so and offers nothing to analyze", "[incident_line]") {
  detect::Verdict v = MakeVerdict(detect::VerdictKind::kStraggler, 0xab, 3, "AllReduce");
  v.culprit_ranks = {0};
  v.rank_evidence = {Rank(0, 0)};
  const std::string line = watch::IncidentLine(kOrigin, v, "related: x", "/d", false);
  CHECK(line == "vm:11510:11512 [rank 1] NCCLWATCH WARN straggler comm 0xab #3 AllReduce culprit ranks "
                "[0]; dump FAILED, dir /d (related: x)");
  CHECK(watch::DumpsAndNextStep("/d", true) == "; dumps in /d; next: ncclwatch analyze /d");
}

TEST_CASE("the resolved line is preload/README.md's example", "[incident_line]") {
  const watch::ResolvedIncident incident{"collective_hang", 0x8f4b89fcab170a79, 4, "AllReduce", "/d/x.resolved.json", "", ""};
  CHECK(watch::ResolvedLine(kOrigin, incident, 3900 * kSec / 1000) ==
        "vm:11510:11512 [rank 1] NCCLWATCH INFO resolved after 3.9s: collective_hang comm 0x8f4b89fcab170a79 #4 "
        "AllReduce; noted in /d/x.resolved.json");
  // With the name the framework gave the communicator, as the incident line shows it.
  watch::ResolvedIncident named = incident;
  named.comm_name = "default_pg";
  CHECK(watch::ResolvedLine(kOrigin, named, 3900 * kSec / 1000) ==
        "vm:11510:11512 [rank 1] NCCLWATCH INFO resolved after 3.9s: collective_hang comm 0x8f4b89fcab170a79 "
        "\"default_pg\" #4 AllReduce; noted in /d/x.resolved.json");
}
