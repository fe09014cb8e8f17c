// Runs one body per rank in forked child processes, bounded by a timeout.
// The parent only reaps: children do all CUDA/NCCL work, report failures on stderr and
// exit non-zero. On timeout every child is SIGKILLed and reaped.
#ifndef NCCLWATCH_TESTS_SIM_NCCL_MULTIPROCESS_H_
#define NCCLWATCH_TESTS_SIM_NCCL_MULTIPROCESS_H_

#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace simtest {

struct ChildExit {
  bool exited = false;  // normal exit (then `code`), else killed by `signal`
  int code = -1;
  int signal = 0;
  bool ok() const { return exited && code == 0; }
};

struct RunResult {
  bool timed_out = false;
  bool segment_left = false;  // set by callers from RemoveSegment
  std::vector<ChildExit> children;
  bool all_ok() const;
  std::string Describe() const;
};

// body(rank) returns 0 on success. stdout of child r goes to stdout_paths[r] if given.
RunResult RunRanks(int nranks, const std::function<int(int)>& body, int timeout_ms = 30000,
                   const std::vector<std::string>& stdout_paths = {});

ncclUniqueId NewUniqueId();

// Removes the sim's /dev/shm segment of the communicator of id. True if one was there:
// after an init that completed, the sim itself must already have unlinked it.
bool RemoveSegment(const ncclUniqueId& id);

// Check helper for child bodies: prints and counts failures.
class Checker {
 public:
  explicit Checker(int rank) : rank_(rank) {}
  bool operator()(bool cond, const std::string& what);
  int failures() const { return failures_; }

 private:
  int rank_;
  int failures_ = 0;
};

// One int sum-allreduce on stream, synchronized; the result, or -1 (with failures counted).
int AllReduceSum(ncclComm_t comm, cudaStream_t stream, int value, Checker& check);

// True if `stream` drains within `wait`. Otherwise aborts the communicator from this thread
// while another is blocked in cudaStreamSynchronize, checks that the abort releases it, sets
// *aborted and returns false.
bool StreamFinishes(ncclComm_t comm, cudaStream_t stream, Checker& check, std::chrono::milliseconds wait,
                    bool* aborted);

// Sets an environment variable (NCCLSIM_FAULT, say) for the ranks forked while it lives.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

}  // namespace simtest

#endif  // NCCLWATCH_TESTS_SIM_NCCL_MULTIPROCESS_H_
