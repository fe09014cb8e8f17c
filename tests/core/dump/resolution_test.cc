// Resolution notes (core/dump/resolution.h): written like dumps, read bounded and validated,
// invisible to dump readers.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"
#include "core/dump/resolution.h"
#include "tests/core/analyze/crafted_job.h"
#include "tests/core/dump/temp_dir.h"

using namespace ncclwatch;

namespace {

dump::Resolution StampedNoteOf(const dump::RankDump& d) {
  dump::Resolution note = dump::ResolutionOf(d);
  dump::StampResolutionTime(&note);
  return note;
}

enum class NoteRead { kAbsent, kRead, kInvalid };

NoteRead ReadNote(const std::string& path, std::string* error) {
  const Result<std::optional<dump::Resolution>> read = dump::ReadResolutionFile(path);
  if (!read.ok()) {
    *error = read.error().message();
    return NoteRead::kInvalid;
  }
  return *read ? NoteRead::kRead : NoteRead::kAbsent;
}

}  // namespace

TEST_CASE("a note is named after its dump and reads back as written", "[resolution]") {
  testing::TempDir dir;
  dump::RankDump d = testing::MakeRankDump(3, 8);
  d.incident.id = "collective_hang-0xfeedface12345678-4";
  REQUIRE(dump::WriteDump(d, dir.path()).ok());
  const std::string path = dump::ResolutionPathFor(d, dir.path());
  CHECK(path == dir.path() + "/" + dump::DumpFileStem(d) + ".resolved");
  CHECK(dump::ResolutionPathForDumpFile(dir.path() + "/" + dump::DumpFileStem(d) + ".json") == path);

  dump::Resolution note = dump::ResolutionOf(d);
  CHECK(note.resolved_mono_ns == 0);
  note.resolved_mono_ns = d.incident.detected_mono_ns + 3'500'000'000ull;
  note.resolved_unix_ns = 1'700'000'103'500'000'000ull;
  note.resolved_iso = "2023-11-14T22:15:03.5Z";
  REQUIRE(dump::WriteResolution(note, path).ok());
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  const Result<std::optional<dump::Resolution>> read = dump::ReadResolutionFile(path);
  REQUIRE(read.ok());
  REQUIRE(read->has_value());
  const dump::Resolution& back = **read;
  CHECK(back.incident_id == d.incident.id);
  CHECK(back.pid == d.process.pid);
  CHECK(back.global_rank == 3);
  CHECK(back.host == d.process.host);
  CHECK(back.detected_mono_ns == d.incident.detected_mono_ns);
  CHECK(back.resolved_unix_ns == note.resolved_unix_ns);
  CHECK(back.resolved_iso == note.resolved_iso);
  CHECK(dump::ResolvedAfterNs(back) == 3'500'000'000ull);
}

TEST_CASE("stamping takes both clocks now", "[resolution]") {
  dump::RankDump d = testing::MakeRankDump(0, 2);
  d.incident.detected_mono_ns = 1;
  const dump::Resolution note = StampedNoteOf(d);
  CHECK(note.resolved_mono_ns > 1);
  CHECK(note.resolved_unix_ns > 1'700'000'000'000'000'000ull);
  CHECK(note.resolved_iso.size() == std::string("2026-11-21T23:12:53.123456789Z").size());
  CHECK(dump::ResolvedAfterNs(note) == note.resolved_mono_ns - 1);
}

TEST_CASE("inverted or unset times give no duration", "[resolution]") {
  dump::Resolution note;
  CHECK(dump::ResolvedAfterNs(note) == 0);
  note.detected_mono_ns = 10;
  note.resolved_mono_ns = 5;
  CHECK(dump::ResolvedAfterNs(note) == 0);
}

TEST_CASE("dump readers never see notes", "[resolution]") {
  testing::TempDir dir;
  dump::RankDump d = testing::MakeRankDump(0, 2);
  REQUIRE(dump::WriteDump(d, dir.path()).ok());
  REQUIRE(dump::WriteResolution(StampedNoteOf(d), dump::ResolutionPathFor(d, dir.path())).ok());
  const dump::DumpSet set = dump::ReadDumpDir(dir.path()).value();
  CHECK(set.dumps.size() == 1);
  CHECK(set.rejected.empty());
}

TEST_CASE("a missing note is absent, a bad one invalid with a one-line reason", "[resolution]") {
  testing::TempDir dir;
  std::string error;
  CHECK(ReadNote(dir.File("none.resolved"), &error) == NoteRead::kAbsent);

  const dump::RankDump d = testing::MakeRankDump(0, 2);
  REQUIRE(dump::WriteResolution(StampedNoteOf(d), dir.File("good.resolved")).ok());

  struct Case {
    const char* name;
    std::string contents;
    const char* reason;
  };
  const std::string big(dump::kMaxResolutionBytes + 1, ' ');
  for (const Case& c : {Case{"garbage", "{\"schema\":", "not valid JSON"},
                        Case{"empty", "", "not valid JSON"},
                        Case{"array", "[1]", "not an object"},
                        Case{"foreign", R"({"schema":"ncclwatch.dump","version":1})", "foreign JSON"},
                        Case{"newer", R"({"schema":"ncclwatch.resolution","version":2,"incident":"i","pid":1,)"
                                      R"("global_rank":0,"host":"h"})",
                             "version 2 is newer"},
                        Case{"no_incident", R"({"schema":"ncclwatch.resolution","version":1,"pid":1,)"
                                            R"("global_rank":0,"host":"h"})",
                             "'incident'"},
                        Case{"bad_pid", R"({"schema":"ncclwatch.resolution","version":1,"incident":"i",)"
                                        R"("pid":-4,"global_rank":0,"host":"h"})",
                             "'pid'"},
                        Case{"bad_time", R"({"schema":"ncclwatch.resolution","version":1,"incident":"i",)"
                                         R"("pid":4,"global_rank":0,"host":"h","resolved_mono_ns":"soon"})",
                             "'resolved_mono_ns'"},
                        Case{"overflow", R"({"schema":"ncclwatch.resolution","version":1e400})",
                             "unreadable resolution note"},
                        Case{"big", big, "too large"}}) {
    INFO(c.name);
    const std::string path = dir.File(std::string(c.name) + ".resolved");
    dir.Write(std::string(c.name) + ".resolved", c.contents);
    error.clear();
    CHECK(ReadNote(path, &error) == NoteRead::kInvalid);
    CHECK(error.rfind(path + ": ", 0) == 0);
    CHECK(error.find(c.reason) != std::string::npos);
    CHECK(error.find('\n') == std::string::npos);
  }

  // Never through a symlink, never a directory or FIFO (and opening one never blocks).
  REQUIRE(::symlink(dir.File("good.resolved").c_str(), dir.File("link.resolved").c_str()) == 0);
  CHECK(ReadNote(dir.File("link.resolved"), &error) == NoteRead::kInvalid);
  REQUIRE(::mkdir(dir.File("dir.resolved").c_str(), 0700) == 0);
  CHECK(ReadNote(dir.File("dir.resolved"), &error) == NoteRead::kInvalid);
  REQUIRE(::mkfifo(dir.File("fifo.resolved").c_str(), 0600) == 0);
  CHECK(ReadNote(dir.File("fifo.resolved"), &error) == NoteRead::kInvalid);
  CHECK(error.find("not a regular file") != std::string::npos);
}
