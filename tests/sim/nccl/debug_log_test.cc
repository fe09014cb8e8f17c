// NCCL_DEBUG / NCCL_DEBUG_SUBSYS lines of the sim: the torch tests use the COLL lines as an oracle
// of which collectives each rank issued, so their format and filtering are pinned here.
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <regex>
#include <string>

namespace {

// Runs a 1-rank job (AllReduce, Broadcast, Send-free) in a child with the given NCCL_DEBUG_SUBSYS
// and returns what it printed on stdout.
std::string RunJobWithSubsys(const char* subsys) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    setenv("NCCL_DEBUG", "INFO", 1);
    if (subsys != nullptr) setenv("NCCL_DEBUG_SUBSYS", subsys, 1);
    ncclComm_t comm = nullptr;
    int dev = 0;
    float* buf = nullptr;
    cudaStream_t stream = nullptr;
    bool ok = ncclCommInitAll(&comm, 1, &dev) == ncclSuccess &&
              cudaMalloc(reinterpret_cast<void**>(&buf), 16 * sizeof(float)) == cudaSuccess &&
              cudaStreamCreate(&stream) == cudaSuccess &&
              ncclAllReduce(buf, buf, 16, ncclFloat, ncclSum, comm, stream) == ncclSuccess &&
              ncclBroadcast(buf, buf, 4, ncclFloat, 0, comm, stream) == ncclSuccess &&
              cudaStreamSynchronize(stream) == cudaSuccess && ncclCommDestroy(comm) == ncclSuccess;
    fflush(stdout);
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  std::string out;
  char chunk[4096];
  for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) > 0;) out.append(chunk, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return out;
}

size_t Count(const std::string& text, const std::regex& re) {
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

const std::regex kInit(R"(NCCL INFO \w+ comm 0x[0-9a-f]+ rank 0 nranks 1 .* - Init START)");
const std::regex kColl(R"(NCCL INFO (\w+): opCount ([0-9a-f]+) sendbuff 0x[0-9a-f]+ recvbuff 0x[0-9a-f]+ count (\d+) datatype \d+ op \d+ root -?\d+ comm (0x[0-9a-f]+) \[nranks=1\] stream 0x[0-9a-f]+)");

}  // namespace

TEST_CASE("COLL lines: one per collective, in issue order, naming the comm of Init START", "[debug]") {
  const std::string out = RunJobWithSubsys("INIT,COLL");
  std::smatch init;
  REQUIRE(std::regex_search(out, init, std::regex(R"(NCCL INFO \w+ comm (0x[0-9a-f]+) rank 0 nranks 1 )")));
  auto it = std::sregex_iterator(out.begin(), out.end(), kColl);
  REQUIRE(std::distance(it, std::sregex_iterator()) == 2);
  CHECK((*it)[1] == "AllReduce");
  CHECK((*it)[2] == "0");
  CHECK((*it)[3] == "16");
  CHECK((*it)[4] == init[1].str());
  ++it;
  CHECK((*it)[1] == "Broadcast");
  CHECK((*it)[2] == "1");
  CHECK((*it)[3] == "4");
}

TEST_CASE("NCCL_DEBUG_SUBSYS filters as in real NCCL", "[debug]") {
  SECTION("default: INIT on, COLL off") {
    const std::string out = RunJobWithSubsys(nullptr);
    CHECK(Count(out, kInit) == 1);
    CHECK(Count(out, kColl) == 0);
  }
  SECTION("COLL only") {
    const std::string out = RunJobWithSubsys("coll");
    CHECK(Count(out, kInit) == 0);
    CHECK(Count(out, kColl) == 2);
  }
  SECTION("ALL") { CHECK(Count(RunJobWithSubsys("ALL"), kColl) == 2); }
  SECTION("inverted list") {
    const std::string out = RunJobWithSubsys("^COLL");
    CHECK(Count(out, kInit) == 1);
    CHECK(Count(out, kColl) == 0);
  }
}
