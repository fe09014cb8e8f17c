// Runs N ranks of preload_rank under LD_PRELOAD=libncclwatch.so, each in its own process,
// and reads what they publish. Bounded: every wait has a deadline, and the destructor
// kills and reaps any rank still running and removes the job's stale segments.
#ifndef NCCLWATCH_TESTS_PRELOAD_RANK_JOB_H_
#define NCCLWATCH_TESTS_PRELOAD_RANK_JOB_H_

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/shm/snapshot.h"

namespace ncclwatch::testing {

struct RankOutput {
  pid_t pid = 0;
  std::vector<std::string> lines;  // stdout and stderr, up to READY
  std::map<int, uint64_t> streams;  // "STREAM i 0x..." lines
};

class RankJob {
 public:
  // `processes` ranks of `preload_rank <scenario>`; extra environment as K=V.
  RankJob(const std::string& scenario, int processes, std::vector<std::string> extra_env = {});
  ~RankJob();
  RankJob(const RankJob&) = delete;
  RankJob& operator=(const RankJob&) = delete;

  const std::string& job_id() const { return job_id_; }
  const std::array<unsigned char, 128>& unique_id(int index) const { return ids_[index]; }

  // Waits until every rank printed READY; false on timeout or early exit.
  bool WaitReady(int timeout_ms);
  const RankOutput& rank(int r) const { return ranks_[r]; }

  // Re-reads the job until `done` holds or the timeout passes; returns the last read.
  shm::JobSnapshot SnapshotWhen(const std::function<bool(const shm::JobSnapshot&)>& done, int timeout_ms) const;

  // Releases the ranks and returns their exit statuses (-1: killed after the timeout).
  std::vector<int> Finish(int timeout_ms);

 private:
  void Spawn(const std::string& scenario, int rank, int processes, const std::vector<std::string>& extra_env);
  bool ReadLines(int rank, int timeout_ms);

  std::string job_id_;
  std::array<unsigned char, 128> ids_[2];
  std::vector<RankOutput> ranks_;
  std::vector<int> stdin_fds_;
  std::vector<int> stdout_fds_;
  std::vector<std::string> partial_;
  std::vector<bool> ready_;
  bool finished_ = false;
};

std::string HexBytes(const unsigned char* bytes, size_t size);

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_PRELOAD_RANK_JOB_H_
