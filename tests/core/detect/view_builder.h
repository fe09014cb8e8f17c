// Helpers to craft host views for the detector tests: a job of N ranks stepping through
// collectives, with per-rank control over what each rank issued and when.
#ifndef NCCLWATCH_TESTS_CORE_DETECT_VIEW_BUILDER_H_
#define NCCLWATCH_TESTS_CORE_DETECT_VIEW_BUILDER_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/detect/facts.h"

namespace ncclwatch::detect::testing {

inline constexpr uint64_t kSec = 1'000'000'000ull;
inline constexpr uint64_t kMs = 1'000'000ull;
inline constexpr int kFloat32 = 7;  // ncclFloat32
inline constexpr int kSum = 0;      // ncclSum

inline CommFacts MakeComm(uint64_t hash, int rank, int nranks) {
  CommFacts comm;
  comm.comm_hash = hash;
  comm.rank = rank;
  comm.nranks = nranks;
  comm.device = rank;
  comm.init_started_ns = 1 * kSec;
  comm.init_done_ns = 2 * kSec;
  return comm;
}

// Records that `comm` issued #seq at `enqueue_ns`; complete_ns == 0 leaves it pending.
inline void Issue(CommFacts& comm, uint64_t seq, uint64_t enqueue_ns, uint64_t complete_ns = 0,
                  const std::string& op = "AllReduce", uint64_t count = 1024, int root = -1) {
  RecordFacts record;
  record.seq = seq;
  record.op = op;
  record.count = count;
  record.datatype = kFloat32;
  record.redop = (op == "AllReduce" || op == "Reduce" || op == "ReduceScatter") ? kSum : -1;
  record.root = root;
  record.enqueue_ns = enqueue_ns;
  record.complete_ns = complete_ns;
  comm.records.push_back(record);
  comm.last_enqueued_seq = std::max(comm.last_enqueued_seq, seq);
  if (complete_ns != 0) comm.last_completed_seq = std::max(comm.last_completed_seq, seq);
}

// A healthy history: #first..#last AllReduce, one every `period_ns` from `start_ns`, each
// completing 10 ms after issue. Keeps only the last 64 records, like a ring.
inline void History(CommFacts& comm, uint64_t first, uint64_t last, uint64_t start_ns,
                    uint64_t period_ns) {
  for (uint64_t seq = first; seq <= last; ++seq) {
    uint64_t at = start_ns + (seq - first) * period_ns;
    Issue(comm, seq, at, at + 10 * kMs);
  }
  if (comm.records.size() > 64) comm.records.erase(comm.records.begin(), comm.records.end() - 64);
}

inline ProcessFacts MakeProcess(int32_t pid, int global_rank) {
  ProcessFacts process;
  process.pid = pid;
  process.global_rank = global_rank;
  process.host = "node0";
  return process;
}

// `nranks` processes (pid 1000 + rank), each holding rank r of communicator `hash` with a
// healthy history #1..#last_done (one per second, starting at 10 s).
inline JobFacts HealthyJob(uint64_t hash, int nranks, uint64_t last_done) {
  JobFacts view;
  for (int rank = 0; rank < nranks; ++rank) {
    ProcessFacts process = MakeProcess(1000 + rank, rank);
    CommFacts comm = MakeComm(hash, rank, nranks);
    History(comm, 1, last_done, 10 * kSec, 1 * kSec);
    process.comms.push_back(comm);
    view.processes.push_back(process);
  }
  return view;
}

// The time at which HealthyJob's #seq was issued.
inline uint64_t HealthyIssueTime(uint64_t seq) { return 10 * kSec + (seq - 1) * kSec; }

inline CommFacts& CommOf(JobFacts& view, int process_index, int comm_index = 0) {
  return view.processes[process_index].comms[comm_index];
}

}  // namespace ncclwatch::detect::testing

#endif  // NCCLWATCH_TESTS_CORE_DETECT_VIEW_BUILDER_H_
