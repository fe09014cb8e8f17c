// A process is its pid, start time and boot; a run is its run key joined through shared
// communicators (core/shm/run_identity.h); an aborted op is not a completed one.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include "core/shm/reader.h"
#include "core/shm/record_flags.h"
#include "core/shm/segment_gc.h"
#include "core/shm/run_identity.h"
#include "segment_test_util.h"

namespace ncclwatch::shm {
namespace {

using testing::OptionsForThisProcess;
using testing::ScopedSegment;
using testing::UniqueJobId;

std::unique_ptr<SegmentWriter> Create(const SegmentOptions& options) {
  Result<std::unique_ptr<SegmentWriter>> created = SegmentWriter::Create(options);
  if (!created.ok()) FAIL(created.error().message());
  return std::move(created).value();
}

bool AliveIn(const std::string& job, pid_t pid) {
  for (const ProcessView& p : ReadJobSnapshot(job).processes) {
    if (p.pid == pid) return p.alive;
  }
  FAIL("no segment of pid " << pid);
  return false;
}

TEST_CASE("a segment names a process by pid, start time and boot: a recycled pid reads as gone", "[identity]") {
  const std::string job = UniqueJobId("recycled");
  SegmentOptions options = OptionsForThisProcess(job, 16);
  auto real = Create(options);
  CHECK(AliveIn(job, getpid()));
  real->CloseAndUnlink();

  // The pid runs (it is ours), but the segment's process started at another time.
  options.process_start_ticks += 1;
  auto recycled = Create(options);
  CHECK_FALSE(AliveIn(job, getpid()));
  recycled->CloseAndUnlink();

  // Same pid and start time, another boot: a copy, or a /dev/shm that outlived a reboot.
  options = OptionsForThisProcess(job, 16);
  options.boot_id = "00000000-0000-0000-0000-000000000000";
  REQUIRE(options.boot_id != BootId());
  auto other_boot = Create(options);
  CHECK_FALSE(AliveIn(job, getpid()));
  other_boot->CloseAndUnlink();
}

ProcessView Process(pid_t pid, uint64_t run_key, std::vector<uint64_t> hashes) {
  ProcessView p;
  p.pid = pid;
  p.run_key = run_key;
  for (uint64_t h : hashes) {
    CommView c;
    c.comm_hash = h;
    c.flags = kCommHashKnown;
    p.comms.push_back(c);
  }
  return p;
}

std::vector<pid_t> Pids(const JobSnapshot& s) {
  std::vector<pid_t> pids;
  for (const ProcessView& p : s.processes) pids.push_back(p.pid);
  return pids;
}

TEST_CASE("a run is its launcher's key, joined through shared communicators", "[identity]") {
  JobSnapshot s;
  s.processes = {Process(10, 7, {0xa}),          // self
                 Process(11, 7, {}),             // same launcher, no communicator yet
                 Process(12, 9, {0xa, 0xb}),     // other parent (a wrapper), shares 0xa
                 Process(13, 8, {0xb}),          // shares 0xb with 12: joined transitively
                 Process(14, 5, {0xc}),          // another job with the same id
                 Process(15, 5, {})};
  // An unknown hash never joins (0 or not flagged known).
  s.processes.push_back(Process(16, 6, {}));
  s.processes.back().comms.push_back(CommView{});
  KeepRunOf(10, &s);
  CHECK(Pids(s) == std::vector<pid_t>{10, 11, 12, 13});

  JobSnapshot without_self;
  without_self.processes = {Process(20, 1, {}), Process(21, 2, {})};
  KeepRunOf(10, &without_self);
  CHECK(without_self.processes.size() == 2);
}

TEST_CASE("run keys differ by parent and its start time; never 0", "[identity]") {
  const std::string boot = BootId();
  CHECK(RunKeyOf(boot, 100, 5) != RunKeyOf(boot, 100, 6));
  CHECK(RunKeyOf(boot, 100, 5) != RunKeyOf(boot, 101, 5));
  CHECK(RunKeyOf(boot, 100, 5) != RunKeyOf("another boot", 100, 5));
  CHECK(RunKeyOf(boot, 100, 5) == RunKeyOf(boot, 100, 5));
  CHECK(ThisProcessRunKey() == RunKeyOf(boot, getppid(), ProcessStartTicks(getppid())));
  CHECK(ThisProcessRunKey() != 0);
}

// A child that creates its segment (with run key `run`) and dies without a word.
pid_t DeadWriter(const std::string& job, uint64_t run) {
  const pid_t child = fork();
  if (child == 0) {
    SegmentOptions options = OptionsForThisProcess(job, 16);
    options.run_key = run;
    auto writer = SegmentWriter::Create(options).value_or(nullptr);
    _exit(writer ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? child : -1;
}

// A child of run `run` that creates its segment and exits with `status` (its exit recorded).
pid_t ExitedWriter(const std::string& job, uint64_t run, int status) {
  const pid_t child = fork();
  if (child == 0) {
    SegmentOptions options = OptionsForThisProcess(job, 16);
    options.run_key = run;
    auto writer = SegmentWriter::Create(options).value_or(nullptr);
    if (writer) writer->RecordExit(ExitHow::kStatus, status);
    _exit(writer ? 0 : 1);
  }
  int status_of_child = 0;
  waitpid(child, &status_of_child, 0);
  return WIFEXITED(status_of_child) && WEXITSTATUS(status_of_child) == 0 ? child : -1;
}

TEST_CASE("a job that just ended stays for its next attempt; a failed run its launcher restarts is kept",
          "[identity]") {
  const uint64_t minute = 60ull * 1000 * 1000 * 1000;
  const std::string ended = UniqueJobId("just-ended");
  REQUIRE(ExitedWriter(ended, 4004, 1) > 0);  // attempt 0's rank 1 raised ...
  REQUIRE(ExitedWriter(ended, 4004, 0) > 0);  // ... and its rank 0 went down with it
  // Between two attempts (RemoveDeadJobs judges a job's quiet the same way; it is not called here:
  // it would sweep the dead jobs of every test on this machine).
  CHECK(RemoveDeadRuns(ended, 5005, getuid(), minute) == 0);
  CHECK(ReadJobSnapshot(ended).processes.size() == 2);
  CHECK(RemoveDeadRuns(ended, 5005, getuid(), 1) == 2);  // a run that ended 1 ns ago is quiet

  // At the run's last exit: a failed run that may be restarted keeps its segments, a clean one does not.
  const std::string failed = UniqueJobId("failed-run");
  REQUIRE(ExitedWriter(failed, 6006, 1) > 0);
  REQUIRE(ExitedWriter(failed, 6006, 0) > 0);
  CHECK(RemoveRunIfEnded(failed, 6006, getuid(), /*keep_failed=*/true) == 0);
  CHECK(RemoveRunIfEnded(failed, 6006, getuid(), /*keep_failed=*/false) == 2);
  const std::string clean = UniqueJobId("clean-run");
  REQUIRE(ExitedWriter(clean, 7007, 0) > 0);
  REQUIRE(ExitedWriter(clean, 7007, 0) > 0);
  CHECK(RemoveRunIfEnded(clean, 7007, getuid(), /*keep_failed=*/true) == 2);
}

TEST_CASE("a new run removes what earlier runs of its job id left, and nothing of live runs", "[identity]") {
  const std::string job = UniqueJobId("dead-runs");
  SegmentOptions ours = OptionsForThisProcess(job, 16);
  ours.run_key = 1001;
  auto mine = Create(ours);
  REQUIRE(DeadWriter(job, 1001) > 0);  // a crashed rank of our own run: evidence, kept
  REQUIRE(DeadWriter(job, 2002) > 0);  // a killed earlier run: two ranks, both dead
  REQUIRE(DeadWriter(job, 2002) > 0);
  REQUIRE(DeadWriter(job, 3003) > 0);  // a run beside ours, one rank dead ...
  SegmentOptions beside = OptionsForThisProcess(job, 16);
  beside.run_key = 3003;  // ... and one alive (this process stands in for it)
  auto live_beside = Create(beside);

  CHECK(ReadJobSnapshot(job).processes.size() == 6);
  CHECK(RemoveDeadRuns(job, 1001) == 2);
  CHECK(ReadJobSnapshot(job).processes.size() == 4);
  CHECK(RemoveDeadRuns(job, 1001) == 0);
  live_beside->CloseAndUnlink();
  mine->CloseAndUnlink();
  RemoveStaleSegments(job);
}

// A communicator slot of `segment`, its init begun; and an 8-element AllReduce.
CommSlot BegunSlot(ScopedSegment& segment) {
  CommSlot slot = segment->ClaimCommSlot().value();
  REQUIRE(slot.valid());
  slot.BeginInit(0, 50);
  return slot;
}
OpFingerprint AllReduce() {
  OpFingerprint op;
  op.op = Op::kAllReduce;
  op.count = 8;
  return op;
}

// The records of the segment's one communicator, as a reader sees them.
std::vector<RecordView> RecordsOf(ScopedSegment& segment) {
  const std::optional<ProcessView> view = ReadSegment(segment->name().substr(1));
  REQUIRE(view);
  REQUIRE(view->comms.size() == 1);
  return view->comms[0].records;
}

TEST_CASE("an op its communicator's abort ended is not complete, and the seq does not advance", "[identity]") {
  ScopedSegment segment(UniqueJobId("aborted"), 16);
  CommSlot slot = BegunSlot(segment);
  const OpFingerprint op = AllReduce();
  const RecordRef done = slot.Append(op, 0, 100);
  slot.MarkCompleted(done, 150);
  const RecordRef pending = slot.Append(op, 0, 200);
  CHECK(slot.OldestPendingEnqueueNs() == 200);
  slot.MarkPendingAborted();
  CHECK(slot.OldestPendingEnqueueNs() == 0);
  // The abort tears the kernels down and the completion event fires.
  slot.MarkCompleted(pending, 300);
  CHECK(slot.header()->last_completed_seq.load() == 1);
  const std::vector<RecordView> records = RecordsOf(segment);
  REQUIRE(records.size() == 2);
  CHECK(records[0].complete_ns == 150);
  CHECK((records[0].flags & kRecordAborted) == 0);
  CHECK(records[1].complete_ns == 0);
  CHECK((records[1].flags & kRecordAborted) != 0);
  CHECK(CompletionUnknown(records[1].flags));
}

TEST_CASE("a group's range completes around an op NCCL refused inside it", "[identity]") {
  ScopedSegment segment(UniqueJobId("refused"), 16);
  CommSlot slot = BegunSlot(segment);
  const OpFingerprint op = AllReduce();
  const RecordRef queued = slot.Append(op, kRecordInGroup, 100, /*group_key=*/3);
  const RecordRef refused = slot.Append(op, kRecordInGroup, 110, 3);
  slot.AddFlags(refused, kRecordFailed);
  const RecordRef last = slot.Append(op, kRecordInGroup, 120, 3);
  // The group's one completion event covers its range, the refused op's record within it.
  slot.MarkRangeCompleted(queued.ring_index, last.ring_index, last.seq, 500);
  CHECK(slot.header()->last_completed_seq.load() == 3);
  const std::vector<RecordView> records = RecordsOf(segment);
  REQUIRE(records.size() == 3);
  CHECK(records[0].complete_ns == 500);
  CHECK(records[1].complete_ns == 0);
  CHECK((records[1].flags & kRecordFailed) != 0);
  CHECK(records[2].complete_ns == 500);
}

TEST_CASE("a simulated group's records are taken back: their seqs go to the next ops", "[identity]") {
  ScopedSegment segment(UniqueJobId("retract"), 16);
  CommSlot slot = BegunSlot(segment);
  const OpFingerprint all_reduce = AllReduce();
  OpFingerprint send = all_reduce;
  send.op = Op::kSend;
  send.root_or_peer = 1;
  OpFingerprint recv = send;
  recv.op = Op::kRecv;
  const RecordRef kept = slot.Append(all_reduce, 0, 100);  // #1, before the group
  CHECK(slot.Append(send, 0, 110).seq == 1);
  // The simulated group: a collective, a send and a receive to peer 1.
  const RecordRef first = slot.Append(all_reduce, kRecordInGroup, 200, /*group_key=*/7);
  CHECK(first.seq == 2);
  CHECK(slot.Append(send, kRecordInGroup, 210, 7).seq == 2);
  CHECK(slot.Append(all_reduce, kRecordInGroup, 215, 7).seq == 3);
  CHECK(slot.Append(recv, kRecordInGroup, 220, 7).seq == 1);
  CHECK(slot.header()->collective_launches.load() == 2);  // the group's two share launch 2
  CHECK(slot.header()->p2p_launches.load() == 3);
  slot.Retract(first.ring_index);
  CHECK(slot.header()->records_written.load() == first.ring_index);
  CHECK(slot.header()->last_enqueued_seq.load() == 1);
  CHECK(slot.header()->collective_launches.load() == 1);
  CHECK(slot.header()->p2p_launches.load() == 1);
  // The next ops take the numbers back, in the ring slots the group had.
  const RecordRef next = slot.Append(all_reduce, 0, 300);
  CHECK(next.seq == 2);
  CHECK(next.ring_index == first.ring_index);
  CHECK(slot.Append(send, 0, 310).seq == 2);
  CHECK(slot.Append(recv, 0, 320).seq == 1);
  CHECK(slot.header()->collective_launches.load() == 2);
  CHECK(slot.header()->p2p_launches.load() == 3);
  // Nothing older was touched; a range that is not the newest is left alone.
  slot.Retract(kept.ring_index + 100);
  CHECK(slot.header()->records_written.load() == next.ring_index + 3);
  const std::vector<RecordView> records = RecordsOf(segment);
  REQUIRE(records.size() == 5);
  for (const RecordView& r : records) CHECK((r.flags & kRecordNotLaunched) == 0);
  CHECK(records[2].enqueue_ns == 300);
}

}  // namespace
}  // namespace ncclwatch::shm
