#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "core/dump/dump_reader.h"
#include "core/dump/dump_writer.h"
#include "tests/catch_skip.h"
#include "tests/core/analyze/crafted_job.h"
#include "tests/core/dump/read_back.h"
#include "tests/core/dump/temp_dir.h"

using namespace ncclwatch;

namespace {

// Lets the first kBudget bytes through, then fails like a full disk.
constexpr size_t kBudget = 3000;
size_t g_written = 0;
ssize_t WriteUntilFull(int fd, const void* buf, size_t len) {
  if (g_written >= kBudget) {
    errno = ENOSPC;
    return -1;
  }
  size_t n = std::min(len, kBudget - g_written);
  ssize_t done = ::write(fd, buf, n);
  if (done > 0) g_written += static_cast<size_t>(done);
  return done;
}

int FsyncFails(int) {
  errno = EIO;
  return -1;
}

dump::RankDump BigDump() {
  dump::RankDump d = testing::MakeRankDump(1, 8);
  testing::Issue(d, 2000, 1999);  // well over 64 KiB of JSON
  return d;
}

// A 64 KiB tmpfs, unmounted (with its contents) on destruction.
class TinyFilesystem {
 public:
  TinyFilesystem() {
    mounted_ = ::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, "size=64k") == 0;
  }
  ~TinyFilesystem() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const testing::TempDir& dir() const { return dir_; }

 private:
  testing::TempDir dir_;
  bool mounted_ = false;
};

}  // namespace

TEST_CASE("a full disk (injected ENOSPC) leaves no file at all", "[dump][writer]") {
  testing::TempDir dir;
  g_written = 0;
  dump::WriteHooks hooks;
  hooks.write = WriteUntilFull;
  Result<dump::DumpFiles> result = dump::WriteDump(BigDump(), dir.path(), hooks);
  CHECK_FALSE(result.ok());
  CHECK(result.error().error_number() == ENOSPC);
  CHECK(result.error().message().find("No space left on device") != std::string::npos);
  CHECK(dir.Entries().empty());
}

// Its own ctest entry (dump_writer_full_tmpfs): skipped where no tmpfs can be mounted.
TEST_CASE("a real full tmpfs gives ENOSPC and leaves no partial file", "[.root][dump_writer_full_tmpfs]") {
  TinyFilesystem fs;
  testing::SkipUnless(fs.mounted(), "mounting a tmpfs needs root (CAP_SYS_ADMIN)");
  Result<dump::DumpFiles> result = dump::WriteDump(BigDump(), fs.dir().path());
  CHECK(result.error().error_number() == ENOSPC);
  CHECK(fs.dir().Entries().empty());
  // A small dump still fits afterwards: the failed attempt freed its space.
  dump::RankDump small = testing::MakeRankDump(2, 8);
  CHECK(dump::WriteDump(small, fs.dir().path()).ok());
}

TEST_CASE("a failing fsync is reported and removes the temporary", "[dump][writer]") {
  testing::TempDir dir;
  dump::WriteHooks hooks;
  hooks.fsync = FsyncFails;
  Result<dump::DumpFiles> result = dump::WriteDump(testing::MakeRankDump(0, 2), dir.path(), hooks);
  CHECK(result.error().error_number() == EIO);
  CHECK(dir.Entries().empty());
}

TEST_CASE("an unwritable or missing directory is an error status, not an exception", "[dump][writer]") {
  Result<dump::DumpFiles> missing = dump::WriteDump(testing::MakeRankDump(0, 2), "/nonexistent/ncclwatch/dumps");
  CHECK(missing.error().error_number() == ENOENT);
  CHECK(missing.error().message().find("/nonexistent/ncclwatch/dumps") != std::string::npos);
  CHECK(missing.error().message().find('\n') == std::string::npos);
  testing::TempDir dir;
  dir.Write("file", "x");
  Result<dump::DumpFiles> not_dir = dump::WriteDump(testing::MakeRankDump(0, 2), dir.File("file"));
  CHECK(not_dir.error().error_number() == ENOTDIR);
}

TEST_CASE("rewriting a dump replaces it whole", "[dump][writer]") {
  testing::TempDir dir;
  dump::RankDump d = testing::MakeRankDump(0, 2);
  testing::Issue(d, 5, 5);
  REQUIRE(dump::WriteDump(d, dir.path()).ok());
  testing::Issue(d, 9, 8);
  Result<dump::DumpFiles> second = dump::WriteDump(d, dir.path());
  REQUIRE(second.ok());
  const dump::RankDump read = testing::ReadBack(second->json_path);
  CHECK(read.comms.at(0).last_enqueued_seq == 9);
  CHECK(dir.Entries().size() == 2);  // .json and .txt, no temporaries
}
