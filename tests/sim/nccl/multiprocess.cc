#include "multiprocess.h"

#include <cuda_runtime_api.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <future>
#include <fcntl.h>
#include <signal.h>
#include <sstream>
#include <sys/wait.h>
#include <sys/mman.h>
#include <unistd.h>

#include "comm_hash.h"

namespace simtest {

bool RunResult::all_ok() const {
  if (timed_out || segment_left) return false;
  for (const auto& c : children)
    if (!c.ok()) return false;
  return true;
}

std::string RunResult::Describe() const {
  std::ostringstream out;
  if (timed_out) out << "timed out; ";
  if (segment_left) out << "shm segment left in /dev/shm; ";
  for (size_t r = 0; r < children.size(); ++r) {
    const auto& c = children[r];
    out << "rank " << r << ": " << (c.exited ? "exit " + std::to_string(c.code)
                                             : "signal " + std::to_string(c.signal)) << "; ";
  }
  return out.str();
}

RunResult RunRanks(int nranks, const std::function<int(int)>& body, int timeout_ms,
                   const std::vector<std::string>& stdout_paths) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids;
  for (int r = 0; r < nranks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (static_cast<size_t>(r) < stdout_paths.size()) {
        const int fd = open(stdout_paths[r].c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) dup2(fd, STDOUT_FILENO);
      }
      int rc = 1;
      try {
        rc = body(r);
      } catch (...) {
        std::fprintf(stderr, "rank %d: exception\n", r);
      }
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(rc);
    }
    pids.push_back(pid);
  }
  RunResult result;
  result.children.resize(nranks);
  std::vector<bool> reaped(nranks, false);
  int left = nranks;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (left > 0) {
    for (int r = 0; r < nranks; ++r) {
      if (reaped[r]) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      reaped[r] = true;
      --left;
      auto& c = result.children[r];
      c.exited = WIFEXITED(status);
      c.code = c.exited ? WEXITSTATUS(status) : -1;
      c.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      result.timed_out = true;
      for (int r = 0; r < nranks; ++r)
        if (!reaped[r]) kill(pids[r], SIGKILL);
      for (int r = 0; r < nranks; ++r)
        if (!reaped[r]) waitpid(pids[r], nullptr, 0);
      break;
    }
    timespec ts{0, 5 * 1000 * 1000};  // reaping poll: sleeps, never spins
    nanosleep(&ts, nullptr);
  }
  return result;
}

ncclUniqueId NewUniqueId() {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) std::abort();
  return id;
}

bool RemoveSegment(const ncclUniqueId& id) {
  char name[64];
  std::snprintf(name, sizeof name, "/ncclsim.%u.%016llx", static_cast<unsigned>(getuid()),
                static_cast<unsigned long long>(ncclsim::HashUniqueId(id.internal, sizeof id.internal)));
  return shm_unlink(name) == 0;
}

bool Checker::operator()(bool cond, const std::string& what) {
  if (!cond) {
    ++failures_;
    if (failures_ <= 20) std::fprintf(stderr, "rank %d: check failed: %s\n", rank_, what.c_str());
  }
  return cond;
}

int AllReduceSum(ncclComm_t comm, cudaStream_t stream, int value, Checker& check) {
  int out = -1;
  check(ncclAllReduce(&value, &out, 1, ncclInt32, ncclSum, comm, stream) == ncclSuccess, "allreduce");
  check(cudaStreamSynchronize(stream) == cudaSuccess, "sync");
  return out;
}

bool StreamFinishes(ncclComm_t comm, cudaStream_t stream, Checker& check, std::chrono::milliseconds wait,
                    bool* aborted) {
  auto synced = std::async(std::launch::async, [stream] { return cudaStreamSynchronize(stream); });
  if (synced.wait_for(wait) == std::future_status::ready) return true;
  check(ncclCommAbort(comm) == ncclSuccess, "abort");
  *aborted = true;
  check(synced.wait_for(std::chrono::seconds(5)) == std::future_status::ready,
        "abort releases the blocked stream sync");
  return false;
}

}  // namespace simtest
