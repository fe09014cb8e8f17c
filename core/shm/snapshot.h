// Plain, self-contained copy of what the processes of one job published on this host.
// Produced by reader.h; consumed by the watchdog, the detector and the CLI.
#ifndef NCCLWATCH_CORE_SHM_SNAPSHOT_H_
#define NCCLWATCH_CORE_SHM_SNAPSHOT_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/shm/layout.h"
#include "core/shm/process_info.h"

namespace ncclwatch::shm {

struct RecordView {
  uint64_t ring_index = 0;
  Op op = Op::kNone;
  uint8_t datatype = 0;
  uint8_t redop = 0;
  uint64_t seq = 0;  // collective seq, or per-peer P2P seq
  uint64_t count = 0;  // saturated at kMaxRecordCount (2^40 - 1)
  // The framework's sequence number: for a collective its launch on the communicator (each
  // ungrouped collective one, each group of collectives one: torch's SeqNum, Flight
  // Recorder's collective_seq_id), for a P2P op its position among the communicator's P2P
  // ops (p2p_seq_id). 0: unknown.
  uint64_t framework_seq = 0;
  int32_t root_or_peer = -1;
  uint32_t flags = 0;  // kRecord* bits
  uint64_t stream = 0;
  uint64_t enqueue_ns = 0;
  uint64_t complete_ns = 0;  // 0 while not seen complete
};

// One launch of a CUDA graph that replayed ops of the communicator (layout.h, ReplayRecord).
struct ReplayView {
  uint64_t ring_index = 0;
  uint64_t graph = 0;   // the graph's key on this communicator
  uint64_t replay = 0;  // 1-based, per (graph, communicator) on this rank
  uint64_t first_seq = 0;            // #N of the graph's first captured collective here, 0 none
  uint64_t first_framework_seq = 0;  // its framework seq, 0 unknown
  uint32_t ops = 0;
  std::vector<Op> op_codes;  // the first kReplayOpCodes ops, in capture order
  uint32_t flags = 0;        // kRecord* bits
  uint64_t stream = 0;
  uint64_t enqueue_ns = 0;
  uint64_t complete_ns = 0;  // 0 while not seen complete
};

struct PeerView {
  int32_t peer = -1;
  uint64_t sends = 0;
  uint64_t recvs = 0;
};

struct CommView {
  uint32_t slot = 0;
  CommState state = CommState::kFree;
  uint64_t comm_hash = 0;
  uint64_t parent_hash = 0;
  uint64_t handle = 0;
  int rank = -1;
  int nranks = -1;
  int device = -1;
  uint32_t flags = 0;  // kComm* bits
  std::string name;    // ncclConfig_t.commName (raw bytes, unescaped), empty when none
  uint64_t init_start_ns = 0;
  uint64_t init_done_ns = 0;  // 0 while init runs
  int init_result = 0;
  int async_error = 0;
  uint64_t async_error_ns = 0;
  uint64_t last_enqueued_seq = 0;
  uint64_t last_completed_seq = 0;
  uint64_t last_completed_ns = 0;
  uint64_t records_written = 0;
  uint64_t collective_launches = 0;  // layout.h: the newest collective's framework_seq
  uint64_t p2p_launches = 0;         // the newest P2P op's framework_seq
  uint32_t peers_overflowed = 0;
  uint64_t untracked_ops = 0;  // ops never to be seen complete: unknown, not complete
  std::vector<PeerView> peers;
  std::vector<RecordView> records;  // oldest first, at most ring_capacity
  uint64_t replays_written = 0;     // graph replays ever published on this communicator
  std::vector<ReplayView> replays;  // oldest first, at most kReplayRingCapacity
};

// Whether `comm`'s hash is known and usable to tell communicators (and runs) apart.
inline bool HashKnown(const CommView& comm) { return (comm.flags & kCommHashKnown) != 0 && comm.comm_hash != 0; }

struct SyncView {
  int tid = 0;
  SyncKind kind = SyncKind::kNone;
  uint64_t target = 0;
  int device = -1;
  uint64_t blocked_since_ns = 0;  // 0 when not blocked
  uint64_t syncs_completed = 0;
  SyncApi api = SyncApi::kRuntime;  // the runtime's call or the driver's (layout.h)
};

struct ProcessView {
  std::string segment_name;  // /dev/shm entry
  pid_t pid = 0;
  uint64_t process_start_ticks = 0;
  uint64_t run_key = 0;  // run_identity.h
  bool alive = false;  // same boot, pid runs and started at process_start_ticks
  bool stale = false;  // owner gone without removing the segment
  bool closed = false;  // owner removed it on a clean exit (still mapped by a reader)
  // The owner recorded that it left (SegmentState::kExited): it takes no further part, even
  // while its pid still runs its exit. exit_* as in layout.h's exit evidence.
  bool exited = false;
  ExitHow exit_how = ExitHow::kNone;
  int exit_status = 0;
  int exit_signal = 0;
  uint64_t exit_ns = 0;
  // What the kernel says the process is doing, read for a live process that has not exited
  // (process_info.h): 'T' stopped, 'D' in the kernel, ...
  OsState os;
  std::string host;
  std::string job_id;
  int global_rank = -1;
  RankSource rank_source = RankSource::kUnknown;
  int local_rank = -1;
  int world_size = -1;
  int restart_count = -1;  // the launcher's attempt (layout.h); -1 not given
  int requeue_count = -1;
  uint64_t created_ns = 0;
  uint64_t stall_threshold_ns = 0;  // the job's NCCLWATCH_STALL_SEC as its writer had it; 0: unknown
  uint32_t ring_capacity = 0;
  uint64_t segment_bytes = 0;
  std::vector<SyncView> sync_slots;  // owned slots only
  std::vector<CommView> comms;       // slots ever used, including destroyed comms
  uint32_t comms_unwatched = 0;      // communicators left unwatched: no slot, or no /dev/shm to back one
  uint32_t comms_reserved = 0;       // comm slots backed by /dev/shm (layout.h, Reservation)
};

struct JobSnapshot {
  std::string job_id;
  uint64_t taken_ns = 0;  // CLOCK_MONOTONIC
  std::vector<ProcessView> processes;  // sorted by global rank, then pid
};

}  // namespace ncclwatch::shm

#endif  // NCCLWATCH_CORE_SHM_SNAPSHOT_H_
