// Test helper: removes what a killed job left on this host.
//
//   watchdog_job_gc JOB_ID [COMM_HASH...]
//
// Unlinks the sim's /dev/shm/ncclsim.<uid>.<commHash> entry of every communicator the job's
// ncclwatch segments name, and of every COMM_HASH given (0x..., e.g. from the sim's
// NCCL_DEBUG=INFO lines, for communicators ncclwatch never saw), then the job's stale
// ncclwatch segments. Run only after every
// process of the job is gone (live owners' segments are kept). Prints what it removed.
#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "core/shm/reader.h"
#include "core/shm/segment_gc.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s JOB_ID [COMM_HASH...]\n", argv[0]);
    return 2;
  }
  const ncclwatch::shm::JobSnapshot snapshot = ncclwatch::shm::ReadJobSnapshot(argv[1]);
  std::set<uint64_t> hashes;
  for (const auto& p : snapshot.processes) {
    for (const auto& c : p.comms) hashes.insert(c.comm_hash);
  }
  for (int i = 2; i < argc; ++i) hashes.insert(std::strtoull(argv[i], nullptr, 16));
  int sim_removed = 0;
  for (uint64_t h : hashes) {
    char name[64];
    std::snprintf(name, sizeof name, "/ncclsim.%u.%016" PRIx64, static_cast<unsigned>(getuid()), h);
    if (shm_unlink(name) == 0) ++sim_removed;
  }
  const int removed = ncclwatch::shm::RemoveStaleSegments(argv[1]);
  std::printf("removed %d sim segments, %d ncclwatch segments\n", sim_removed, removed);
  return 0;
}
