// The process-local communicator object behind ncclComm_t.
#ifndef NCCLWATCH_SIM_NCCL_COMM_H_
#define NCCLWATCH_SIM_NCCL_COMM_H_

#include <nccl.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fault_spec.h"
#include "premulsum.h"
#include "shm_segment.h"

struct ncclComm {
  ncclComm();
  ~ncclComm();
  ncclComm(const ncclComm&) = delete;
  ncclComm& operator=(const ncclComm&) = delete;

  int rank = 0;
  int nranks = 1;
  int device = 0;
  int index = 0;  // K-th communicator created by this process (NCCLSIM_FAULT comm=K)
  uint64_t hash = 0;
  bool blocking = true;
  std::vector<ncclsim::Fault> faults;
  std::unique_ptr<ncclsim::ShmSegment> segment;
  std::vector<std::string> hosts;  // each rank's host name, known once every rank attached

  std::atomic<bool> aborted{false};   // releases every waiter of this rank
  std::atomic<bool> revoked{false};
  std::atomic<bool> suspended{false};  // ncclCommSuspend: new work is refused until resumed
  std::atomic<int> suspend_flags{0};
  std::atomic<ncclResult_t> init_state{ncclInProgress};
  std::atomic<ncclResult_t> async_error{ncclSuccess};
  std::atomic<int> split_count{0};
  std::atomic<uint64_t> debug_op_count{0};  // opCount of NCCL_DEBUG_SUBSYS=COLL lines

  // Stream-side progress, only touched by host functions in stream order.
  uint64_t phase = 0;
  uint64_t boot_phase = 0;

  // Work enqueued on streams (or waiting to be) and not finished yet.
  std::mutex mu;
  std::condition_variable cv;
  int inflight = 0;
  // Collectives execute in call order even when issued on different streams:
  // each takes a ticket at launch and runs when exec_turn reaches it.
  uint64_t next_ticket = 0;
  uint64_t exec_turn = 0;
  std::set<uint64_t> skipped_tickets;  // launched but never enqueued (launch failed)
  uint64_t issued_ops = 0;  // collectives and Send/Recv launched: NCCLSIM_FAULT seq numbers
  // CUDA graph launches that replayed ops of this comm, the last one's launch id, and the ops
  // numbered in it so far: NCCLSIM_FAULT replay=K,seq=J.
  uint64_t replays = 0;
  uint64_t replay_launch = 0;
  uint64_t replay_ops = 0;
  bool release_when_idle = false;  // aborted with work still queued: the last op frees the comm
  std::map<int, ncclsim::PreMulSum> redops;  // ncclRedOpCreatePreMulSum, by ncclRedOp_t value
  int next_redop = ncclNumOps;
  int windows_registered = 0;                // ncclCommWindowRegister calls, in order
  std::vector<uint64_t> signals_consumed;    // WaitSignal progress, stream side
  bool grow_id_pending = false;              // ncclCommGetUniqueId issued, not yet consumed
  uint64_t grow_hash = 0;
  int pending_enqueue = 0;  // nonblocking: accepted, not yet on a stream
  std::thread init_thread;

  // Deferred enqueues of nonblocking communicators.
  std::vector<std::function<void()>> worker_queue;
  std::thread worker;
  bool worker_stop = false;
};

namespace ncclsim {

using Comm = ncclComm;

// Rings every rank's doorbell of the comm.
void RingAll(Comm* c);
void Ring(Comm* c, int rank);
// Blocks (futex on this rank's doorbell) until pred() is true; false if aborted first.
bool WaitFor(Comm* c, const std::function<bool()>& pred, int timeout_ms = -1);
// Host-side allgather of two ints per rank, used by split.
bool BootAllGather(Comm* c, const int32_t mine[2], std::vector<std::array<int32_t, 2>>* all);

// Whether `c` is a live communicator that is the process's `index`-th (comm.cc): a graph
// replayed after its communicator was destroyed must not touch it, even if a new one took
// its address.
bool CommIsLive(const Comm* c, int index);
// Records that `c` became the process's `index`-th communicator.
void MarkCommLive(const Comm* c, int index);

}  // namespace ncclsim

#endif  // NCCLWATCH_SIM_NCCL_COMM_H_
