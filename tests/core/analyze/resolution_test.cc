// Resolved incidents (core/analyze/resolution.h): every dump of every incident needs a note
// of its own for the set to count as resolved.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analyze/analyzer.h"
#include "core/analyze/report.h"
#include "core/analyze/resolution.h"
#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"
#include "core/dump/resolution.h"
#include "tests/core/analyze/crafted_job.h"
#include "tests/core/dump/temp_dir.h"

using namespace ncclwatch;

namespace {

constexpr uint64_t kSec = 1'000'000'000ull;

// Rank r of a 2-rank collective hang at #4 of incident `id`, written into `dir`.
dump::RankDump WriteHangDump(const testing::TempDir& dir, int rank, const std::string& id) {
  dump::RankDump d = testing::MakeRankDump(rank, 2);
  d.incident.id = id;
  testing::Issue(d, testing::Comm(d), 4, 3);
  d.verdict.kind = detect::VerdictKind::kCollectiveHang;
  d.verdict.comm_hash = testing::kWorldComm;
  d.verdict.seq = 4;
  d.verdict.op = "AllReduce";
  d.verdict.culprit_ranks = {0, 1};
  REQUIRE(dump::WriteDump(d, dir.path()).ok());
  return d;
}

void WriteNote(const testing::TempDir& dir, const dump::RankDump& d, uint64_t after_ns) {
  dump::Resolution note = dump::ResolutionOf(d);
  note.resolved_mono_ns = d.incident.detected_mono_ns + after_ns;
  REQUIRE(dump::WriteResolution(note, dump::ResolutionPathFor(d, dir.path())).ok());
}

bool HasNoteWith(const std::vector<std::string>& notes, const std::string& text) {
  for (const std::string& n : notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("dumps without notes are unresolved, as before notes existed", "[resolution]") {
  testing::TempDir dir;
  WriteHangDump(dir, 0, "collective_hang-0xfeedface12345678-4");
  WriteHangDump(dir, 1, "collective_hang-0xfeedface12345678-4");
  const dump::DumpSet set = dump::ReadDumpDir(dir.path()).value();
  REQUIRE(set.dumps.size() == 2);
  const analyze::ResolutionSummary s = analyze::SummarizeResolutions(set);
  CHECK(s.incidents == 1);
  CHECK(s.resolved_incidents == 0);
  CHECK_FALSE(s.all_resolved);
  CHECK(s.resolved_after_ns == 0);
  CHECK(s.notes.empty());
}

TEST_CASE("an incident every dumping rank saw complete is resolved, after the longest wait", "[resolution]") {
  testing::TempDir dir;
  const dump::RankDump d0 = WriteHangDump(dir, 0, "collective_hang-0xfeedface12345678-4");
  const dump::RankDump d1 = WriteHangDump(dir, 1, "collective_hang-0xfeedface12345678-4");
  WriteNote(dir, d0, 3 * kSec);
  WriteNote(dir, d1, 4 * kSec);
  const dump::DumpSet set = dump::ReadDumpDir(dir.path()).value();
  REQUIRE(set.rejected.empty());
  const analyze::ResolutionSummary s = analyze::SummarizeResolutions(set);
  CHECK(s.all_resolved);
  CHECK(s.resolved_incidents == 1);
  CHECK(s.resolved_after_ns == 4 * kSec);

  analyze::Analysis a = analyze::Analyze(set);
  CHECK(a.verdict.kind == detect::VerdictKind::kCollectiveHang);
  CHECK(a.resolution.resolved);
  const nlohmann::json json = analyze::RenderJsonReport(a);
  CHECK(json["verdict"]["resolved"] == true);
  CHECK(json["verdict"]["resolved_after_ns"] == 4 * kSec);
  CHECK(analyze::RenderTextReport(a).find("\n  resolved after 4.0s") != std::string::npos);
}

TEST_CASE("a rank that never saw the collective complete keeps the incident open", "[resolution]") {
  testing::TempDir dir;
  const dump::RankDump d0 = WriteHangDump(dir, 0, "collective_hang-0xfeedface12345678-4");
  WriteHangDump(dir, 1, "collective_hang-0xfeedface12345678-4");
  WriteNote(dir, d0, 3 * kSec);
  const dump::DumpSet set = dump::ReadDumpDir(dir.path()).value();
  analyze::Analysis a = analyze::Analyze(set);
  CHECK_FALSE(a.resolution.resolved);
  CHECK(a.resolution.resolved_after_ns == 0);
  CHECK(HasNoteWith(a.notes, "only 1 of its 2 dumps"));
  const nlohmann::json json = analyze::RenderJsonReport(a);
  CHECK(json["verdict"]["resolved"] == false);
  CHECK(analyze::RenderTextReport(a).find("resolved after") == std::string::npos);
}

TEST_CASE("one open incident among resolved ones keeps the set open", "[resolution]") {
  testing::TempDir dir;
  WriteNote(dir, WriteHangDump(dir, 0, "straggler-0xfeedface12345678-2"), kSec);
  WriteNote(dir, WriteHangDump(dir, 1, "straggler-0xfeedface12345678-2"), kSec);
  dump::RankDump later = testing::MakeRankDump(0, 2);
  later.process.pid = 2000;  // another process of rank 0 (a restart), still hung
  later.incident.id = "collective_hang-0xfeedface12345678-9";
  REQUIRE(dump::WriteDump(later, dir.path()).ok());
  const analyze::ResolutionSummary s = analyze::SummarizeResolutions(dump::ReadDumpDir(dir.path()).value());
  CHECK(s.incidents == 2);
  CHECK(s.resolved_incidents == 1);
  CHECK_FALSE(s.all_resolved);
}

TEST_CASE("a note that belongs to another dump, or is corrupt, is ignored with a note", "[resolution]") {
  testing::TempDir dir;
  const dump::RankDump d0 = WriteHangDump(dir, 0, "collective_hang-0xfeedface12345678-4");
  const dump::RankDump d1 = WriteHangDump(dir, 1, "collective_hang-0xfeedface12345678-4");
  // Rank 0's note copied to rank 1's name: another pid.
  dump::Resolution borrowed = dump::ResolutionOf(d0);
  borrowed.resolved_mono_ns = d0.incident.detected_mono_ns + kSec;
  REQUIRE(dump::WriteResolution(borrowed, dump::ResolutionPathFor(d1, dir.path())).ok());
  WriteNote(dir, d0, kSec);
  analyze::ResolutionSummary s = analyze::SummarizeResolutions(dump::ReadDumpDir(dir.path()).value());
  CHECK_FALSE(s.all_resolved);
  CHECK(HasNoteWith(s.notes, "resolution note ignored: "));
  CHECK(HasNoteWith(s.notes, "of pid 1000, its dump for incident"));

  dir.Write(std::filesystem::path(dump::ResolutionPathFor(d1, dir.path())).filename().string(), "{\"schema\"");
  s = analyze::SummarizeResolutions(dump::ReadDumpDir(dir.path()).value());
  CHECK_FALSE(s.all_resolved);
  CHECK(HasNoteWith(s.notes, "not valid JSON"));
}

TEST_CASE("notes on many partly resolved incidents stay a few lines", "[resolution]") {
  testing::TempDir dir;
  dump::DumpSet set;
  for (int i = 0; i < 20; ++i) {
    for (int rank = 0; rank < 2; ++rank) {
      dump::LoadedDump loaded{dir.File("i" + std::to_string(i) + "r" + std::to_string(rank) + ".json"),
                              testing::MakeRankDump(rank, 2)};
      loaded.dump.incident.id = "straggler-0x1-" + std::to_string(i);
      if (rank == 0) {
        dump::Resolution note = dump::ResolutionOf(loaded.dump);
        REQUIRE(dump::WriteResolution(note, dump::ResolutionPathForDumpFile(loaded.path)).ok());
      }
      set.dumps.push_back(std::move(loaded));
    }
  }
  const analyze::ResolutionSummary s = analyze::SummarizeResolutions(set);
  CHECK(s.incidents == 20);
  CHECK(s.resolved_incidents == 0);
  REQUIRE(s.notes.size() == 5);
  CHECK(s.notes.back() == "... and 16 more notes on resolution");
}
