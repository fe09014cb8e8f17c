// Writes crafted dump sets for the grammar checker: wording_job DIR creates DIR/<case>/ with
// the dumps (.json and .txt) of each case below. tests/core/format/wording_test.py runs analyze,
// analyze --json and trace over each, and checks every text against wording_rules.py.
//
// The cases reach the sentences whose grammar depends on a count or whose numbers have names:
// one culprit and two, one dump in the set, a rank without a dump, fp8 and custom reduction
// ops, an unknown datatype, async errors, the default stream, a blocked host sync, a gone rank.
#include <sys/stat.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tests/core/analyze/crafted_job.h"

using namespace ncclwatch;
using testing::Issue;
using testing::MakeRankDump;

namespace {

constexpr int kRanks = 4;

// Every record on the default stream, rank 0's main thread blocked in cudaStreamSynchronize.
void Decorate(std::vector<dump::RankDump>& job) {
  for (auto& d : job) {
    for (auto& r : d.comms[0].records) r.stream = 0;
    testing::AddBlockedMainThread(d, "train_step");
  }
  dump::RankDump& first = job.front();
  first.host_syncs.push_back(
      detect::SyncFacts{first.incident.detected_mono_ns - 5'300'000'000, detect::SyncTarget::kStream, 0, first.process.pid});
}

// ranks `late` have not joined #3, the others wait in it.
std::vector<dump::RankDump> Straggler(const std::vector<int>& late) {
  std::vector<dump::RankDump> job;
  for (int r = 0; r < kRanks; ++r) {
    job.push_back(MakeRankDump(r, kRanks));
    bool is_late = false;
    for (int l : late) is_late = is_late || l == r;
    Issue(job.back(), is_late ? 2 : 3, 2);
  }
  Decorate(job);
  return job;
}

// Rank 1 issues bfloat16 with a PreMulSum op at #3 where the others issue float8e4m3 with
// an unknown datatype on rank 3; rank 2 reports ncclRemoteError.
std::vector<dump::RankDump> Mismatch() {
  std::vector<dump::RankDump> job;
  for (int r = 0; r < kRanks; ++r) {
    job.push_back(MakeRankDump(r, kRanks));
    Issue(job.back(), 3, 2);
    detect::RecordFacts& third = job.back().comms[0].records.back();
    third.datatype = r == 1 ? 9 : r == 3 ? 42 : 10;
    third.redop = r == 1 ? 5 : 4;
  }
  job[2].comms[0].async_error = 6;
  Decorate(job);
  return job;
}

// One dump of a 2-rank communicator: rank 0 waits in #3, rank 1 left no dump.
std::vector<dump::RankDump> OneDump() {
  std::vector<dump::RankDump> job{MakeRankDump(0, 2)};
  Issue(job.back(), 3, 2, "Broadcast");
  job.back().comms[0].async_error = 12;  // not an ncclResult_t this build knows
  Decorate(job);
  return job;
}

// Rank 3 exited while the others wait in #3 (its dump written by rank 0 on its behalf).
std::vector<dump::RankDump> RankExited() {
  std::vector<dump::RankDump> job = Straggler({3});
  dump::RankDump& gone = job.back();
  gone.process.alive = false;
  gone.process.exit = detect::ExitFacts{true, 1, 0, gone.incident.detected_mono_ns - 2'000'000'000};
  gone.written_by = dump::DumpWriter{job.front().process.pid, job.front().process.host, 0};
  gone.comms[0].lifecycle = detect::CommLifecycle::kDestroyed;
  return job;
}

bool Write(const std::string& dir, const std::vector<dump::RankDump>& job) {
  if (mkdir(dir.c_str(), 0700) != 0) {
    std::perror(dir.c_str());
    return false;
  }
  testing::WriteJob(job, dir);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: wording_job DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  try {
    const bool ok = Write(dir + "/one_culprit", Straggler({1})) && Write(dir + "/two_culprits", Straggler({1, 2})) &&
                    Write(dir + "/mismatch", Mismatch()) && Write(dir + "/one_dump", OneDump()) &&
                    Write(dir + "/rank_exited", RankExited());
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wording_job: %s\n", e.what());
    return 1;
  }
}
