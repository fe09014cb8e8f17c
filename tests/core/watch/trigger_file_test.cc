#include "core/watch/trigger_file.h"

#include <catch2/catch.hpp>

#include <ctime>

#include "tests/core/dump/temp_dir.h"

namespace ncclwatch::watch {
namespace {

Trigger Sample(const std::string& id) {
  Trigger t;
  t.incident_id = id;
  t.job_id = "job7";
  t.verdict.kind = detect::VerdictKind::kStraggler;
  t.verdict.comm_hash = 0xdeadbeef12ull;
  t.verdict.seq = 5;
  t.verdict.op = "AllReduce";
  t.verdict.culprit_ranks = {2, 5};
  t.verdict.other_ranks = {0};
  t.verdict.partial = true;
  t.host = "node7";
  t.pid = 4242;
  t.run_key = 0x1234abcdull;
  t.comms = {0xaaull, 0xbbull};
  t.verdict.summary = "rank 2 has not joined\n#5";
  return t;
}

TEST_CASE("a trigger survives formatting and parsing", "[trigger]") {
  const std::optional<Trigger> t = ParseTrigger(FormatTrigger(Sample("straggler-0xdeadbeef12-5")));
  REQUIRE(t);
  CHECK(t->incident_id == "straggler-0xdeadbeef12-5");
  CHECK(t->verdict.kind == detect::VerdictKind::kStraggler);
  CHECK(t->verdict.comm_hash == 0xdeadbeef12ull);
  CHECK(t->verdict.seq == 5);
  CHECK(t->verdict.op == "AllReduce");
  CHECK(t->verdict.culprit_ranks == std::vector<int>{2, 5});
  CHECK(t->verdict.other_ranks == std::vector<int>{0});
  CHECK(t->verdict.partial);
  CHECK(t->host == "node7");
  CHECK(t->pid == 4242);
  CHECK(t->run_key == 0x1234abcdull);
  CHECK(t->comms == std::vector<uint64_t>{0xaa, 0xbb});
  CHECK(t->verdict.summary == "rank 2 has not joined #5");  // kept on one line
}

TEST_CASE("a trigger is acted on only by its own run", "[trigger]") {
  Trigger t = Sample("x");  // declared on node7 by run 0x1234abcd, member of 0xaa and 0xbb
  // A shared communicator: ours, whatever the host or run key says.
  CHECK(TriggerIsOfOurRun(t, "node7", 0x999, {0xbb, 0xcc}));
  CHECK(TriggerIsOfOurRun(t, "node1", 0x999, {0xaa}));
  // Same host, no shared communicator: the run key decides.
  CHECK(TriggerIsOfOurRun(t, "node7", 0x1234abcd, {0xcc}));
  CHECK_FALSE(TriggerIsOfOurRun(t, "node7", 0x999, {0xcc}));
  CHECK_FALSE(TriggerIsOfOurRun(t, "node7", 0x999, {}));
  // Another host, both sides know their communicators, none shared: another job.
  CHECK_FALSE(TriggerIsOfOurRun(t, "node1", 0x1234abcd, {0xcc}));
  // Nothing to tell them apart: taken.
  CHECK(TriggerIsOfOurRun(t, "node1", 0x999, {}));
  t.comms.clear();
  CHECK(TriggerIsOfOurRun(t, "node1", 0x999, {0xcc}));
  // A trigger of an older writer (no run, no comms) from our host: taken.
  t.run_key = 0;
  CHECK(TriggerIsOfOurRun(t, "node7", 0x999, {0xcc}));
}

TEST_CASE("a trigger names its attempt and reads it back; junk reads as not given", "[trigger]") {
  Trigger t = Sample("x");
  CHECK(FormatTrigger(t).find("attempt=") == std::string::npos);  // none known: none written
  t.attempt = detect::Attempt{2, 5};
  const std::optional<Trigger> back = ParseTrigger(FormatTrigger(t));
  REQUIRE(back);
  CHECK(back->attempt == detect::Attempt{2, 5});
  const std::string text = "ncclwatch.trigger 1\nincident=x\nattempt=";
  CHECK(ParseTrigger(text + "1")->attempt == detect::Attempt{1, -1});
  CHECK(ParseTrigger(text + "x,3")->attempt == detect::Attempt{-1, 3});
  CHECK(ParseTrigger(text + "-7,99999999999")->attempt == detect::Attempt{-1, -1});
}

TEST_CASE("a trigger is answered only within its own attempt, and only once we run", "[trigger]") {
  Trigger t = Sample("x");
  const detect::Attempt ours{1, -1};
  const uint64_t started = 1'000'000'000'000ull;
  t.attempt = detect::Attempt{0, -1};  // the attempt torchrun restarted us from
  CHECK_FALSE(TriggerIsOfOurAttempt(t, ours, started));
  t.attempt = ours;
  CHECK(TriggerIsOfOurAttempt(t, ours, started));
  t.written_unix_ns = started - 1;  // left before this process began: not ours, whoever wrote it
  CHECK_FALSE(TriggerIsOfOurAttempt(t, ours, started));
  t.attempt = detect::Attempt{};
  CHECK_FALSE(TriggerIsOfOurAttempt(t, ours, started));
  t.written_unix_ns = started + 1;  // a writer that names no attempt, after we started
  CHECK(TriggerIsOfOurAttempt(t, ours, started));
  CHECK(TriggerIsOfOurAttempt(t, detect::Attempt{}, 0));  // nothing known: taken, as before
}

TEST_CASE("the watcher stamps each trigger with when its file was written", "[trigger]") {
  testing::TempDir dir;
  TriggerWatcher watcher(dir.path(), "job7");
  timespec before{};
  clock_gettime(CLOCK_REALTIME, &before);
  REQUIRE(WriteTriggerFile(dir.path(), Sample("a")).ok());
  const std::vector<Trigger> found = watcher.PollNew();
  REQUIRE(found.size() == 1);
  // The file system's timestamp may trail the clock by up to a jiffy (4 ms here).
  const uint64_t before_ns = static_cast<uint64_t>(before.tv_sec) * 1000000000ull + before.tv_nsec;
  CHECK(found[0].written_unix_ns + 10'000'000ull >= before_ns);
  CHECK(found[0].written_unix_ns < before_ns + 60'000'000'000ull);
}

TEST_CASE("a trigger's communicator list is bounded and ignores junk", "[trigger]") {
  Trigger t = Sample("x");
  t.comms.clear();
  for (uint64_t i = 1; i <= kMaxTriggerComms + 10; ++i) t.comms.push_back(i);
  const std::optional<Trigger> back = ParseTrigger(FormatTrigger(t));
  REQUIRE(back);
  CHECK(back->comms.size() == kMaxTriggerComms);
  const std::optional<Trigger> junk =
      ParseTrigger("ncclwatch.trigger 1\nincident=x\ncomms=0x5,zz,,0x0,0x7,-\n");
  REQUIRE(junk);
  CHECK(junk->comms == std::vector<uint64_t>{5, 7});
}

TEST_CASE("a trigger's rank lists are written as runs and read back bounded", "[trigger]") {
  Trigger sample = Sample("x");
  sample.verdict.culprit_ranks = {4, 5, 6, 7, 9};
  sample.verdict.other_ranks = {};
  const std::string text = FormatTrigger(sample);
  CHECK(text.find("\nculprits=4-7,9\n") != std::string::npos);
  CHECK(text.find("\nothers=-\n") != std::string::npos);
  const std::optional<Trigger> t = ParseTrigger(text);
  REQUIRE(t);
  CHECK(t->verdict.culprit_ranks == std::vector<int>{4, 5, 6, 7, 9});
  CHECK(t->verdict.other_ranks.empty());
  // An older writer's plain list reads; a list naming 2^31 ranks is dropped, not expanded.
  const std::optional<Trigger> old = ParseTrigger("ncclwatch.trigger 1\nincident=x\nculprits=2,5\nothers=0-2147483647\n");
  REQUIRE(old);
  CHECK(old->verdict.culprit_ranks == std::vector<int>{2, 5});
  CHECK(old->verdict.other_ranks.empty());
  // Rank lists are sets: a repeated or unordered list reads sorted, each rank once, so it reads
  // back the same after formatting (found by fuzz_trigger_file; seed fuzz/corpus/trigger_file/repeated_rank).
  const std::optional<Trigger> repeated = ParseTrigger("ncclwatch.trigger 1\nincident=x\nculprits=5,1,1\n");
  REQUIRE(repeated);
  CHECK(repeated->verdict.culprit_ranks == std::vector<int>{1, 5});
  const std::optional<Trigger> again = ParseTrigger(FormatTrigger(*repeated));
  REQUIRE(again);
  CHECK(again->verdict.culprit_ranks == repeated->verdict.culprit_ranks);
}

TEST_CASE("text that is not a trigger is rejected", "[trigger]") {
  CHECK_FALSE(ParseTrigger(""));
  CHECK_FALSE(ParseTrigger("incident=x\n"));                      // no header
  CHECK_FALSE(ParseTrigger("ncclwatch.trigger 1\nkind=straggler\n"));  // no id
  CHECK(ParseTrigger("ncclwatch.trigger 1\nincident=x\nfuture=1\n"));  // unknown keys ignored
}

TEST_CASE("the watcher reports each trigger file once", "[trigger]") {
  testing::TempDir dir;
  TriggerWatcher watcher(dir.path(), "job7");
  CHECK(watcher.PollNew().empty());
  REQUIRE(WriteTriggerFile(dir.path(), Sample("a")).ok());
  dir.Write("b.json", "{}");                    // a dump, not a trigger
  dir.Write(".c.trigger.tmp.1", "partial");     // a writer's temporary
  dir.Write("d.trigger", "not a trigger file"); // foreign content
  const std::vector<Trigger> first = watcher.PollNew();
  REQUIRE(first.size() == 1);
  CHECK(first[0].incident_id == "a");
  CHECK(watcher.PollNew().empty());
  REQUIRE(WriteTriggerFile(dir.path(), Sample("e")).ok());
  const std::vector<Trigger> second = watcher.PollNew();
  REQUIRE(second.size() == 1);
  CHECK(second[0].incident_id == "e");
}

TEST_CASE("a missing directory is no trigger and no error", "[trigger]") {
  testing::TempDir dir;
  TriggerWatcher watcher(dir.File("not-yet"), "job7");
  CHECK(watcher.PollNew().empty());
}

TEST_CASE("an unwritable directory is reported, not thrown", "[trigger]") {
  testing::TempDir dir;
  dir.Write("file", "x");
  const Status written = WriteTriggerFile(dir.File("file/sub"), Sample("a"));
  CHECK_FALSE(written.ok());
  CHECK_FALSE(written.message().empty());
  CHECK(written.error_number() == ENOTDIR);
}

}  // namespace
}  // namespace ncclwatch::watch
