// NCCLSIM_FABRIC_DIR: communicators' segments as files in a shared directory (the path ranks on
// different simulated hosts use; here on one host, so it also runs under the sanitizers), and
// the checks that refuse a directory or a segment file others could tamper with.
#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "comm_hash.h"
#include "multiprocess.h"

using simtest::Checker;

namespace {

struct FabricDir {
  FabricDir() {
    char tmpl[] = "/tmp/ncclsim-fabric-test.XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
    setenv("NCCLSIM_FABRIC_DIR", path.c_str(), 1);
  }
  ~FabricDir() {
    unsetenv("NCCLSIM_FABRIC_DIR");
    for (const auto& name : Entries()) unlink((path + "/" + name).c_str());
    rmdir(path.c_str());
  }
  std::vector<std::string> Entries() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(path.c_str())) {
      while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") out.push_back(name);
      }
      closedir(d);
    }
    return out;
  }
  std::string SegmentPath(const ncclUniqueId& id) const {
    char name[64];
    std::snprintf(name, sizeof name, "/ncclsim.%u.%016" PRIx64, static_cast<unsigned>(getuid()),
                  ncclsim::HashUniqueId(id.internal, sizeof id.internal));
    return path + name;
  }
  std::string path;
};

// Init, one AllReduce and a Send/Recv pair, then destroy.
int CollectivesBody(const ncclUniqueId& id, int rank) {
  Checker check(rank);
  cudaSetDevice(rank);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  ncclComm_t comm = nullptr;
  if (!check(ncclCommInitRank(&comm, 2, id, rank) == ncclSuccess, "init")) return 1;
  check(simtest::AllReduceSum(comm, stream, rank + 1, check) == 3, "allreduce over the fabric");
  int* buf = nullptr;
  cudaMalloc(&buf, sizeof(int) * 2);
  const int mine = 100 + rank;
  cudaMemcpy(buf, &mine, sizeof mine, cudaMemcpyHostToDevice);
  ncclGroupStart();
  ncclSend(buf, 1, ncclInt32, 1 - rank, comm, stream);
  ncclRecv(buf + 1, 1, ncclInt32, 1 - rank, comm, stream);
  ncclGroupEnd();
  cudaStreamSynchronize(stream);
  int got = 0;
  cudaMemcpy(&got, buf + 1, sizeof got, cudaMemcpyDeviceToHost);
  check(got == 101 - rank, "send/recv over the fabric: got " + std::to_string(got));
  cudaFree(buf);
  check(ncclCommDestroy(comm) == ncclSuccess, "destroy");
  return check.failures();
}

// Init must fail with ncclSystemError and a GetLastError text containing `reason`.
int RefusedBody(const ncclUniqueId& id, int rank, const std::string& reason) {
  Checker check(rank);
  cudaSetDevice(rank);
  ncclComm_t comm = nullptr;
  check(ncclCommInitRank(&comm, 2, id, rank) == ncclSystemError, "init refused");
  const std::string text = ncclGetLastError(nullptr);
  check(text.find(reason) != std::string::npos, "GetLastError '" + text + "' names '" + reason + "'");
  return check.failures();
}

}  // namespace

TEST_CASE("NCCLSIM_FABRIC_DIR: segments are files there, never in /dev/shm, gone after init", "[sim_nccl][fabric]") {
  FabricDir fabric;
  const ncclUniqueId id = simtest::NewUniqueId();
  auto result = simtest::RunRanks(2, [&](int rank) { return CollectivesBody(id, rank); }, 30000);
  INFO(result.Describe());
  REQUIRE(result.all_ok());
  CHECK_FALSE(simtest::RemoveSegment(id));  // nothing went to /dev/shm
  CHECK(fabric.Entries().empty());          // the last rank to attach unlinked the file
}

TEST_CASE("NCCLSIM_FABRIC_DIR: a directory others could tamper with is refused", "[sim_nccl][fabric]") {
  FabricDir fabric;
  const std::string real = fabric.path + "/real", link = fabric.path + "/link", open = fabric.path + "/open";
  REQUIRE(mkdir(real.c_str(), 0700) == 0);
  REQUIRE(symlink(real.c_str(), link.c_str()) == 0);
  REQUIRE(mkdir(open.c_str(), 0700) == 0);
  REQUIRE(chmod(open.c_str(), 0777) == 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {link, "not a directory (symlinks are refused)"},
      {open, "writable by others and not sticky"},
      {fabric.path + "/missing", "No such file or directory"}};
  for (const auto& [dir, reason] : cases) {
    INFO(dir);
    setenv("NCCLSIM_FABRIC_DIR", dir.c_str(), 1);
    const ncclUniqueId id = simtest::NewUniqueId();
    auto result = simtest::RunRanks(2, [&](int rank) { return RefusedBody(id, rank, reason); }, 30000);
    INFO(result.Describe());
    CHECK(result.all_ok());
  }
  setenv("NCCLSIM_FABRIC_DIR", fabric.path.c_str(), 1);
  rmdir(open.c_str());
  unlink(link.c_str());
  rmdir(real.c_str());
}

TEST_CASE("NCCLSIM_FABRIC_DIR: a planted segment file others can write is refused", "[sim_nccl][fabric]") {
  FabricDir fabric;
  const ncclUniqueId id = simtest::NewUniqueId();
  const std::string planted = fabric.SegmentPath(id);
  const int fd = open(planted.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(fchmod(fd, 0666) == 0);
  close(fd);
  auto result = simtest::RunRanks(2, [&](int rank) { return RefusedBody(id, rank, "refusing it"); }, 30000);
  INFO(result.Describe());
  CHECK(result.all_ok());
}
