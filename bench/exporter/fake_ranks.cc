// Publishes the segments of a synthetic job for the exporter benchmark: NRANKS processes, each
// with NCOMMS communicators whose rings are full (every record written, all complete but the
// newest), as a long-running job looks to a reader. Prints "ready" once every segment is
// written, then holds them until SIGTERM or SIGINT and removes them.
//   fake_ranks JOB NRANKS NCOMMS
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/shm/comm_slot.h"
#include "core/shm/process_info.h"
#include "core/shm/segment_writer.h"
#include "tests/core/shm/segment_test_util.h"

namespace {

using namespace ncclwatch::shm;

// Blocks SIGTERM and SIGINT and waits for one of them.
void WaitForStopSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  int sig = 0;
  sigwait(&set, &sig);
}

int RunRank(const std::string& job, int rank, int nranks, int ncomms, int ready_fd) {
  SegmentOptions options = testing::OptionsForThisProcess(job, kDefaultRingCapacity);
  options.rank.global_rank = rank;
  options.rank.world_size = nranks;
  options.stall_threshold_ns = 60'000'000'000;
  ncclwatch::Result<std::unique_ptr<SegmentWriter>> created = SegmentWriter::Create(options);
  if (!created.ok()) {
    std::fprintf(stderr, "fake_ranks: %s\n", created.error().message().c_str());
    return 1;
  }
  std::unique_ptr<SegmentWriter> segment = std::move(created).value();
  const uint64_t now = MonotonicNowNs();
  for (int c = 0; c < ncomms; ++c) {
    CommSlot comm = segment->ClaimCommSlot().value();
    if (!comm.valid()) break;
    comm.BeginInit(0x1000 + c, now - 100000000000ull);
    comm.PublishIdentity({.comm_hash = 0xbe0c0000ull + c, .parent_hash = 0, .rank = rank, .nranks = nranks,
                          .device = rank, .flags = kCommHashKnown, .name = {}});
    comm.FinishInit(true, 0, now - 99000000000ull);
    const uint32_t records = kDefaultRingCapacity;
    RecordRef last{};
    for (uint32_t i = 0; i < records; ++i) {
      const RecordRef ref = comm.Append({Op::kAllReduce, 7, 0, 1 << 20, -1, 0x55}, 0, now - (records - i) * 1000000ull);
      if (i + 1 < records) comm.MarkCompleted(ref, now - (records - i) * 1000000ull + 500000);
      last = ref;
    }
    (void)last;
  }
  char byte = 'r';
  if (write(ready_fd, &byte, 1) != 1) return 1;
  close(ready_fd);
  WaitForStopSignal();
  segment->CloseAndUnlink();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: fake_ranks JOB NRANKS NCOMMS\n");
    return 2;
  }
  const std::string job = argv[1];
  const int nranks = std::atoi(argv[2]), ncomms = std::atoi(argv[3]);
  int ready[2];
  if (pipe(ready) != 0) return 1;
  std::vector<pid_t> children;
  for (int r = 0; r < nranks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(ready[0]);
      _exit(RunRank(job, r, nranks, ncomms, ready[1]));
    }
    children.push_back(pid);
  }
  close(ready[1]);
  char byte;
  for (int r = 0; r < nranks; ++r) {
    if (read(ready[0], &byte, 1) != 1) {
      std::fprintf(stderr, "fake_ranks: a rank failed\n");
      for (pid_t c : children) kill(c, SIGTERM);
      return 1;
    }
  }
  std::printf("ready\n");
  std::fflush(stdout);
  WaitForStopSignal();
  for (pid_t c : children) kill(c, SIGTERM);
  for (pid_t c : children) waitpid(c, nullptr, 0);
  return 0;
}
