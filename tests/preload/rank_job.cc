#include "rank_job.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>

#include "core/clock/monotonic.h"
#include "core/shm/reader.h"
#include "core/shm/segment_gc.h"

extern char** environ;

namespace ncclwatch::testing {
namespace {

uint64_t NowMs() { return clock::MonotonicNowNs() / 1000000; }

// Polls every rank's pid with a blocking sleep between checks; true when it exited.
bool WaitExit(pid_t pid, int* status, int timeout_ms) {
  const uint64_t deadline = NowMs() + timeout_ms;
  while (true) {
    const pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 || NowMs() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::string HexBytes(const unsigned char* bytes, size_t size) {
  std::string hex;
  char buf[3];
  for (size_t i = 0; i < size; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", bytes[i]);
    hex += buf;
  }
  return hex;
}

RankJob::RankJob(const std::string& scenario, int processes, std::vector<std::string> extra_env) {
  std::random_device random;
  job_id_ = "e2e-" + scenario + "-" + std::to_string(getpid()) + "-" + std::to_string(random() % 100000);
  for (auto& id : ids_) {
    for (auto& byte : id) byte = static_cast<unsigned char>(random());
  }
  ranks_.resize(processes);
  partial_.resize(processes);
  ready_.assign(processes, false);
  for (int r = 0; r < processes; ++r) Spawn(scenario, r, processes, extra_env);
}

void RankJob::Spawn(const std::string& scenario, int rank, int processes, const std::vector<std::string>& extra) {
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.push_back(std::string("LD_PRELOAD=") + NCCLWATCH_PRELOAD_PATH);
  env.push_back("NCCLWATCH_JOB_ID=" + job_id_);
  env.push_back("RANK=" + std::to_string(rank));
  env.push_back("LOCAL_RANK=" + std::to_string(rank));
  env.push_back("WORLD_SIZE=" + std::to_string(processes));
  env.push_back("NCCL_DEBUG=INFO");
  env.push_back("NCCLWATCH_TEST_ID0=" + HexBytes(ids_[0].data(), 128));
  env.push_back("NCCLWATCH_TEST_ID1=" + HexBytes(ids_[1].data(), 128));
  for (const std::string& kv : extra) env.push_back(kv);
  std::vector<char*> envp;
  for (std::string& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::string program = NCCLWATCH_RANK_PATH;
  char* argv[] = {program.data(), const_cast<char*>(scenario.c_str()), nullptr};

  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    dup2(from_child[1], 2);
    execve(argv[0], argv, envp.data());
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  ranks_[rank].pid = pid;
  stdin_fds_.push_back(to_child[1]);
  stdout_fds_.push_back(from_child[0]);
}

bool RankJob::ReadLines(int r, int timeout_ms) {
  pollfd pfd{stdout_fds_[r], POLLIN, 0};
  if (poll(&pfd, 1, timeout_ms) <= 0) return false;
  char buf[4096];
  const ssize_t n = read(stdout_fds_[r], buf, sizeof(buf));
  if (n <= 0) return false;
  partial_[r].append(buf, n);
  size_t newline;
  while ((newline = partial_[r].find('\n')) != std::string::npos) {
    std::string line = partial_[r].substr(0, newline);
    partial_[r].erase(0, newline + 1);
    int index = 0;
    void* pointer = nullptr;
    if (std::sscanf(line.c_str(), "STREAM %d %p", &index, &pointer) == 2) {
      ranks_[r].streams[index] = reinterpret_cast<uint64_t>(pointer);
    }
    if (line == "READY") ready_[r] = true;
    ranks_[r].lines.push_back(std::move(line));
  }
  return true;
}

bool RankJob::WaitReady(int timeout_ms) {
  const uint64_t deadline = NowMs() + timeout_ms;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    while (!ready_[r]) {
      const uint64_t now = NowMs();
      if (now >= deadline || !ReadLines(r, static_cast<int>(deadline - now))) {
        for (const std::string& line : ranks_[r].lines) std::fprintf(stderr, "rank %zu: %s\n", r, line.c_str());
        return false;
      }
    }
  }
  return true;
}

shm::JobSnapshot RankJob::SnapshotWhen(const std::function<bool(const shm::JobSnapshot&)>& done,
                                       int timeout_ms) const {
  const uint64_t deadline = NowMs() + timeout_ms;
  shm::JobSnapshot snapshot = shm::ReadJobSnapshot(job_id_);
  while (!done(snapshot) && NowMs() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    snapshot = shm::ReadJobSnapshot(job_id_);
  }
  return snapshot;
}

std::vector<int> RankJob::Finish(int timeout_ms) {
  finished_ = true;
  for (int& fd : stdin_fds_) {
    close(fd);
    fd = -1;
  }
  std::vector<int> statuses;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    int status = 0;
    if (WaitExit(ranks_[r].pid, &status, timeout_ms)) {
      statuses.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    } else {
      kill(ranks_[r].pid, SIGKILL);
      waitpid(ranks_[r].pid, &status, 0);
      statuses.push_back(-1);
    }
    ranks_[r].pid = 0;
  }
  return statuses;
}

RankJob::~RankJob() {
  for (RankOutput& r : ranks_) {
    if (r.pid > 0) {
      kill(r.pid, SIGKILL);
      int status;
      waitpid(r.pid, &status, 0);
    }
  }
  for (int fd : stdin_fds_) {
    if (fd >= 0) close(fd);
  }
  for (int fd : stdout_fds_) close(fd);
  shm::RemoveStaleSegments(job_id_);
}

}  // namespace ncclwatch::testing
