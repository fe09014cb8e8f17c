// Trigger files in a shared dump directory: only valid triggers of our job and user count,
// and however many arrive, the rate limit bounds the dumps.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include "tests/catch_skip.h"
#include "tests/core/dump/temp_dir.h"
#include "core/watch/dump_rate_limit.h"
#include "core/watch/trigger_file.h"

namespace ncclwatch::watch {
namespace {

constexpr uint64_t kMinute = 60ull * 1000 * 1000 * 1000;

Trigger OfJob(const std::string& id, const std::string& job) {
  Trigger t;
  t.incident_id = id;
  t.job_id = job;
  t.verdict.kind = detect::VerdictKind::kStraggler;
  return t;
}

TEST_CASE("only regular files of our uid, in our format, for our job, are triggers", "[trigger][hostile]") {
  testing::TempDir dir;
  TriggerWatcher watcher(dir.path(), "ourjob");
  REQUIRE(WriteTriggerFile(dir.path(), OfJob("straggler-0x1-5", "ourjob")).ok());  // the control
  REQUIRE(WriteTriggerFile(dir.path(), OfJob("straggler-0x1-6", "otherjob")).ok());
  dir.Write("renamed-0x1-7.trigger", FormatTrigger(OfJob("straggler-0x1-7", "ourjob")));  // id != name
  dir.Write("bad$id.trigger", FormatTrigger(OfJob("bad$id", "ourjob")));
  dir.Write("oldformat.trigger", "ncclwatch.trigger 1\nincident=oldformat\n");  // no job
  REQUIRE(symlink(dir.File("straggler-0x1-5.trigger").c_str(), dir.File("linked-0x1-8.trigger").c_str()) == 0);
  REQUIRE(mkfifo(dir.File("fifo-0x1-9.trigger").c_str(), 0600) == 0);  // must not block the poll
  const std::vector<Trigger> found = watcher.PollNew();
  REQUIRE(found.size() == 1);
  CHECK(found[0].incident_id == "straggler-0x1-5");
  CHECK(found[0].job_id == "ourjob");
  CHECK(watcher.rejected_in_last_poll() == 6);
  CHECK(watcher.PollNew().empty());
  CHECK(watcher.rejected_in_last_poll() == 0);  // each file is judged once
}

// Its own ctest entry (core_watch_trigger_foreign_owner): skipped without root.
TEST_CASE("a valid trigger of another uid is not a trigger", "[.root][trigger_foreign_owner]") {
  testing::SkipUnlessRoot("creating a file owned by another uid needs root");
  testing::TempDir dir;
  TriggerWatcher watcher(dir.path(), "ourjob");
  dir.Write("straggler-0x1-10.trigger", FormatTrigger(OfJob("straggler-0x1-10", "ourjob")));
  REQUIRE(chown(dir.File("straggler-0x1-10.trigger").c_str(), 65534, 65534) == 0);
  dir.Write("straggler-0x1-11.trigger", FormatTrigger(OfJob("straggler-0x1-11", "ourjob")));  // the control
  const std::vector<Trigger> found = watcher.PollNew();
  REQUIRE(found.size() == 1);
  CHECK(found[0].incident_id == "straggler-0x1-11");
  CHECK(watcher.rejected_in_last_poll() == 1);
}

TEST_CASE("written triggers are 0600 and carry the job", "[trigger][hostile]") {
  testing::TempDir dir;
  REQUIRE(WriteTriggerFile(dir.path(), OfJob("a-0x2-1", "j")).ok());
  struct stat st {};
  REQUIRE(stat(dir.File("a-0x2-1.trigger").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  const std::optional<Trigger> t = ParseTrigger(FormatTrigger(OfJob("a-0x2-1", "j")));
  REQUIRE(t);
  CHECK(t->job_id == "j");
}

TEST_CASE("1000 valid triggers within a minute allow one dump", "[trigger][hostile]") {
  testing::TempDir dir;
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(WriteTriggerFile(dir.path(), OfJob("straggler-0x3-" + std::to_string(i), "ourjob")).ok());
  }
  TriggerWatcher watcher(dir.path(), "ourjob");
  DumpRateLimiter trigger_dumps(1, kMinute);
  const uint64_t start = 5 * kMinute;
  int allowed = 0;
  for (const Trigger& t : watcher.PollNew()) allowed += trigger_dumps.TryTake(start + t.incident_id.size()) ? 1 : 0;
  CHECK(allowed == 1);
}

TEST_CASE("the rate limiter refills one token per period up to its burst", "[trigger][hostile]") {
  DumpRateLimiter limiter(4, kMinute);
  uint64_t now = 1000;
  int taken = 0;
  for (int i = 0; i < 10; ++i) taken += limiter.TryTake(now) ? 1 : 0;
  CHECK(taken == 4);
  CHECK_FALSE(limiter.TryTake(now + kMinute - 1));
  CHECK(limiter.TryTake(now + kMinute));
  CHECK_FALSE(limiter.TryTake(now + kMinute));
  now += 100 * kMinute;  // long idle: back to the burst, no more
  taken = 0;
  for (int i = 0; i < 10; ++i) taken += limiter.TryTake(now) ? 1 : 0;
  CHECK(taken == 4);
}

}  // namespace
}  // namespace ncclwatch::watch
