// Small helpers to craft shm snapshots for the core/watch tests.
#ifndef NCCLWATCH_TESTS_CORE_WATCH_SNAPSHOT_BUILDER_H_
#define NCCLWATCH_TESTS_CORE_WATCH_SNAPSHOT_BUILDER_H_

#include <cstdint>

#include "core/shm/snapshot.h"

namespace ncclwatch::testing {

inline shm::RecordView Record(uint64_t seq, shm::Op op, uint64_t enqueue_ns, uint64_t complete_ns = 0) {
  shm::RecordView r;
  r.seq = seq;
  r.op = op;
  r.count = 1024;
  r.datatype = 7;
  r.redop = 0;
  r.root_or_peer = -1;
  r.enqueue_ns = enqueue_ns;
  r.complete_ns = complete_ns;
  return r;
}

// A ready communicator of `nranks` whose records 1..issued were enqueued 1 s apart from
// t = 1 s and all complete up to `completed`.
inline shm::CommView ReadyComm(uint64_t hash, int rank, int nranks, uint64_t issued, uint64_t completed) {
  shm::CommView c;
  c.state = shm::CommState::kReady;
  c.comm_hash = hash;
  c.rank = rank;
  c.nranks = nranks;
  c.device = rank;
  c.init_start_ns = 100;
  c.init_done_ns = 200;
  c.last_enqueued_seq = issued;
  c.last_completed_seq = completed;
  for (uint64_t s = 1; s <= issued; ++s) {
    const uint64_t t = s * 1'000'000'000ull;
    c.records.push_back(Record(s, shm::Op::kAllReduce, t, s <= completed ? t + 1000 : 0));
  }
  return c;
}

inline shm::ProcessView Process(int pid, int global_rank, bool alive = true) {
  shm::ProcessView p;
  p.pid = pid;
  p.alive = alive;
  p.stale = !alive;
  p.host = "hostA";
  p.global_rank = global_rank;
  p.local_rank = global_rank;
  p.world_size = 4;
  return p;
}

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_CORE_WATCH_SNAPSHOT_BUILDER_H_
