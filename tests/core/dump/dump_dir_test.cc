// The dump directory may be shared with other users: modes, planted symlinks, other owners.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/dump/dump_dir.h"
#include "core/dump/dump_writer.h"
#include "tests/core/analyze/crafted_job.h"
#include "tests/catch_skip.h"
#include "tests/core/dump/temp_dir.h"

using namespace ncclwatch;

namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Sets the umask for one scope.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : previous_(umask(mask)) {}
  ~ScopedUmask() { umask(previous_); }

 private:
  mode_t previous_;
};

}  // namespace

TEST_CASE("dump directories are created 0700 and dumps written 0600, whatever the umask", "[dump][dir]") {
  for (mode_t mask : {mode_t{022}, mode_t{077}, mode_t{0}}) {
    testing::TempDir tmp;
    ScopedUmask scoped(mask);
    const std::string dir = tmp.File("ncclwatch-dumps/job1");
    std::vector<std::string> warnings;
    const Result<dump::DumpDirectory> status = dump::PrepareDumpDirectory(dir, false, &warnings);
    REQUIRE(status.ok());
    CHECK(warnings.empty());
    CHECK(ModeOf(tmp.File("ncclwatch-dumps")) == 0700);
    CHECK(ModeOf(dir) == 0700);
    const Result<dump::DumpFiles> result = dump::WriteDump(testing::MakeRankDump(1, 4), dir);
    REQUIRE(result.ok());
    CHECK(ModeOf(result->json_path) == 0600);
    CHECK(ModeOf(result->text_path) == 0600);
  }
}

TEST_CASE("a stricter umask narrows the modes further", "[dump][dir]") {
  testing::TempDir tmp;
  ScopedUmask scoped(0377);
  const Status result = dump::WriteFileAtomically(tmp.File("x.json"), "{}\n");
  REQUIRE(result.ok());
  CHECK(ModeOf(tmp.File("x.json")) == 0400);
}

TEST_CASE("a symlink planted at every temporary name is never written through", "[dump][dir]") {
  testing::TempDir tmp;
  tmp.Write("victim", "precious\n");
  const std::string target = tmp.File("victim");
  const std::string path = tmp.File("rank0.json");
  for (int i = 0; i < dump::kTempNameAttempts; ++i) {
    REQUIRE(symlink(target.c_str(), dump::TempPathFor(path, i).c_str()) == 0);
  }
  const Status result = dump::WriteFileAtomically(path, "{\"dump\":1}\n");
  CHECK_FALSE(result.ok());
  CHECK(result.error_number() == EEXIST);
  CHECK(Contents(target) == "precious\n");
  CHECK(ModeOf(target) != 0);
  CHECK(access(path.c_str(), F_OK) != 0);

  SECTION("with one name left free, the dump is written there and the target still untouched") {
    REQUIRE(unlink(dump::TempPathFor(path, dump::kTempNameAttempts - 1).c_str()) == 0);
    REQUIRE(dump::WriteFileAtomically(path, "{\"dump\":1}\n").ok());
    CHECK(Contents(path) == "{\"dump\":1}\n");
    CHECK(Contents(target) == "precious\n");
  }
}

TEST_CASE("a symlink planted at the final name is replaced, not followed", "[dump][dir]") {
  testing::TempDir tmp;
  tmp.Write("victim", "precious\n");
  const std::string path = tmp.File("rank0.json");
  REQUIRE(symlink(tmp.File("victim").c_str(), path.c_str()) == 0);
  REQUIRE(dump::WriteFileAtomically(path, "{}\n").ok());
  CHECK(Contents(tmp.File("victim")) == "precious\n");
  struct stat st {};
  REQUIRE(lstat(path.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
}

TEST_CASE("a directory of another user is used only when named, and only if others cannot replace files",
          "[.root][dump_dir_foreign_owner]") {  // its own ctest entry: skipped without root
  testing::SkipUnlessRoot("creating a directory owned by another uid needs root");
  testing::TempDir tmp;
  const std::string dir = tmp.File("theirs");
  REQUIRE(mkdir(dir.c_str(), 0755) == 0);
  REQUIRE(chown(dir.c_str(), 65534, 65534) == 0);

  std::vector<std::string> warnings;
  const Result<dump::DumpDirectory> by_default = dump::PrepareDumpDirectory(dir, false, &warnings);
  CHECK_FALSE(by_default.ok());
  CHECK(by_default.error().message().find("belongs to uid 65534") != std::string::npos);
  CHECK(warnings.empty());

  CHECK(dump::PrepareDumpDirectory(dir, true, &warnings).ok());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("belongs to uid 65534") != std::string::npos);

  REQUIRE(chmod(dir.c_str(), 0777) == 0);
  const Result<dump::DumpDirectory> open_to_all = dump::PrepareDumpDirectory(dir, true);
  CHECK_FALSE(open_to_all.ok());
  CHECK(open_to_all.error().message().find("writable by others") != std::string::npos);

  REQUIRE(chmod(dir.c_str(), 01777) == 0);  // like /tmp
  CHECK(dump::PrepareDumpDirectory(dir, true).ok());
}

TEST_CASE("a path that is not a directory is refused", "[dump][dir]") {
  testing::TempDir tmp;
  tmp.Write("file", "x");
  CHECK_FALSE(dump::PrepareDumpDirectory(tmp.File("file"), true).ok());
  CHECK_FALSE(dump::PrepareDumpDirectory(tmp.File("file/sub"), true).ok());
}

TEST_CASE("a directory swapped for a symlink after the first dump does not redirect the next", "[dump][dir]") {
  testing::TempDir tmp;
  const std::string dir = tmp.File("dumps");
  const std::string elsewhere = tmp.File("elsewhere");  // e.g. another user's directory
  REQUIRE(mkdir(elsewhere.c_str(), 0700) == 0);
  const Result<dump::DumpDirectory> status = dump::PrepareDumpDirectory(dir, true);
  REQUIRE(status.ok());
  REQUIRE(dump::WriteDump(testing::MakeRankDump(0, 4), *status).ok());

  // The checked directory moves away and a symlink takes its name.
  REQUIRE(rename(dir.c_str(), tmp.File("moved").c_str()) == 0);
  REQUIRE(symlink(elsewhere.c_str(), dir.c_str()) == 0);
  const Result<dump::DumpFiles> second = dump::WriteDump(testing::MakeRankDump(1, 4), *status);
  REQUIRE(second.ok());

  int in_elsewhere = 0;
  for (const auto& entry : std::filesystem::directory_iterator(elsewhere)) {
    (void)entry;
    ++in_elsewhere;
  }
  CHECK(in_elsewhere == 0);
  const std::string name = second->json_path.substr(second->json_path.rfind('/') + 1);
  CHECK(access((tmp.File("moved") + "/" + name).c_str(), F_OK) == 0);
  CHECK(ModeOf(tmp.File("moved") + "/" + name) == 0600);
}

TEST_CASE("a symlink at the default location is refused, a named one is followed", "[dump][dir]") {
  testing::TempDir tmp;
  const std::string real = tmp.File("real");
  REQUIRE(mkdir(real.c_str(), 0700) == 0);
  const std::string link = tmp.File("link");
  REQUIRE(symlink(real.c_str(), link.c_str()) == 0);

  const Result<dump::DumpDirectory> by_default = dump::PrepareDumpDirectory(link, false);
  CHECK_FALSE(by_default.ok());
  CHECK(by_default.error().message().find("symlink") != std::string::npos);

  const Result<dump::DumpDirectory> named = dump::PrepareDumpDirectory(link, true);
  REQUIRE(named.ok());
  REQUIRE(named->fd() >= 0);
  const Result<dump::DumpFiles> result = dump::WriteDump(testing::MakeRankDump(0, 2), *named);
  REQUIRE(result.ok());
  const std::string name = result->json_path.substr(result->json_path.rfind('/') + 1);
  CHECK(access((real + "/" + name).c_str(), F_OK) == 0);
}
