// The reader's input budget: each real file counts once however many names it has, the
// total is checked before anything is parsed, and nothing can make a read block or exceed it.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/dump/dump_json.h"
#include "core/dump/dump_reader.h"
#include "tests/core/analyze/crafted_job.h"
#include "tests/core/dump/temp_dir.h"

using namespace ncclwatch;
namespace fs = std::filesystem;

namespace {

// A valid dump of `bytes` or a little more (a long cmdline argument pads it).
std::string DumpOfAbout(size_t bytes, int rank = 0) {
  dump::RankDump d = testing::MakeRankDump(rank, 2);
  d.process.cmdline.push_back(std::string(bytes, 'x'));
  return dump::ToJson(d).dump();
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("four symlinks and a hard link to one dump are read once and count once", "[dump][budget]") {
  testing::TempDir outside, dir;
  const std::string text = DumpOfAbout(100'000);
  outside.Write("real.json", text);
  for (const char* name : {"a.json", "b.json", "c.json", "d.json"}) {
    fs::create_symlink(outside.File("real.json"), dir.File(name));
  }
  fs::create_hard_link(outside.File("real.json"), dir.File("e.json"));
  // Room for the file once and a half: five names would need five times.
  dump::DumpSet set = dump::ReadDumpDir(dir.path(), dump::ReadLimits{text.size() * 3 / 2}).value();
  REQUIRE(set.dumps.size() == 1);
  CHECK(set.dumps[0].path == dir.File("a.json"));  // the first name in path order
  CHECK(set.rejected.empty());
}

TEST_CASE("distinct files over the budget are refused before any is parsed", "[dump][budget]") {
  testing::TempDir dir;
  const std::string text = DumpOfAbout(100'000);
  dir.Write("r0.json", text);
  dir.Write("r1.json", DumpOfAbout(100'000, 1));
  const Result<dump::DumpSet, dump::DumpDirError> over = dump::ReadDumpDir(dir.path(), dump::ReadLimits{text.size() * 3 / 2});
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().over_budget);
  CHECK(over.error().why.find('\n') == std::string::npos);
  CHECK(Contains(over.error().why, dir.path() + ": the dumps exceed the input budget of " +
                                       std::to_string(text.size() * 3 / 2) + " bytes"));
  // Within a budget that holds both, both are read.
  dump::DumpSet both = dump::ReadDumpDir(dir.path(), dump::ReadLimits{text.size() * 3}).value();
  CHECK(both.dumps.size() == 2);
}

TEST_CASE("every file costs at least 4 KiB of the budget", "[dump][budget]") {
  testing::TempDir dir;
  const std::string small = dump::ToJson(testing::MakeRankDump(0, 2)).dump();
  REQUIRE(small.size() < dump::kMinChargedBytes);
  for (int i = 0; i < 4; ++i) dir.Write("r" + std::to_string(i) + ".json", small);
  CHECK(dump::ReadDumpDir(dir.path(), dump::ReadLimits{4 * dump::kMinChargedBytes - 1}).error().over_budget);
  const Result<dump::DumpSet, dump::DumpDirError> set = dump::ReadDumpDir(dir.path(), dump::ReadLimits{4 * dump::kMinChargedBytes});
  REQUIRE(set.ok());
  CHECK(set->dumps.size() == 4);
}

TEST_CASE("a huge file behind many symlinks is refused unread, once", "[dump][budget]") {
  testing::TempDir outside, dir;
  const std::string huge = outside.File("huge.json");
  {
    int fd = ::open(huge.c_str(), O_CREAT | O_WRONLY, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, 250 << 20) == 0);  // sparse: 250 MB that take no disk
    ::close(fd);
  }
  for (const char* name : {"a.json", "b.json", "c.json", "d.json"}) fs::create_symlink(huge, dir.File(name));
  auto start = std::chrono::steady_clock::now();
  dump::DumpSet set = dump::ReadDumpDir(dir.path()).value();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK(set.dumps.empty());
  REQUIRE(set.rejected.size() == 1);
  CHECK(Contains(set.rejected[0].error, "too large to be a dump (262144000 bytes)"));
}

TEST_CASE("a FIFO, a device or a directory named *.json is skipped and never blocks", "[dump][budget]") {
  testing::TempDir dir;
  REQUIRE(::mkfifo(dir.File("fifo.json").c_str(), 0600) == 0);
  fs::create_symlink("/dev/zero", dir.File("zero.json"));
  fs::create_directories(dir.File("sub.json"));
  dir.Write("r0.json", dump::ToJson(testing::MakeRankDump(0, 2)).dump());
  dump::DumpSet set = dump::ReadDumpDir(dir.path()).value();
  CHECK(set.dumps.size() == 1);
  CHECK(set.rejected.empty());
}

TEST_CASE("a single file larger than any dump is refused unread", "[dump][budget]") {
  testing::TempDir dir;
  dir.Write("big.json", std::string(static_cast<size_t>(dump::kMaxDumpBytes) + 1, ' '));
  const Result<dump::RankDump> big = dump::ReadDumpFile(dir.File("big.json"));
  REQUIRE_FALSE(big.ok());
  CHECK(Contains(big.error().message(), "too large to be a dump"));
}
