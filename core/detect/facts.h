// The job model: the facts the one classifier (detector.h) judges, frozen at one instant.
// The hang dump (core/dump/dump.h) holds these same types for its communicators, host syncs
// and exit; core/dump/dump_json.cc is their on-disk schema.
// Two producers fill it, and nothing else is ever classified:
//   * live: core/watch/facts_from_snapshot.h, from one host's shared-memory snapshot
//     (Scope::kHost);
//   * offline: core/analyze/facts_from_dumps.h, from every dump of a job (Scope::kJob).
// The classifier never reads shared memory, files or clocks itself, so every rule is
// tested with crafted facts, and the same facts give the same verdict live and offline.
//
// Conventions:
//   * Times are CLOCK_MONOTONIC nanoseconds, comparable across processes of one host.
//     0 means "never happened / not set".
//   * Collective sequence numbers are 1-based, per communicator, and count identically on
//     every rank (the N-th collective call on a communicator is #N everywhere).
//   * A process that has exited must stay in the facts with alive == false (with its last
//     published state and how it exited) so that its peers' waits can be blamed on it.
#ifndef NCCLWATCH_CORE_DETECT_FACTS_H_
#define NCCLWATCH_CORE_DETECT_FACTS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ncclwatch::detect {

// What a host-side CUDA synchronisation call is waiting on.
enum class SyncTarget { kStream, kEvent, kDevice };
// Which API the blocked call belongs to: the runtime's (cudaStreamSynchronize ...) or the
// driver's (cuStreamSynchronize ...), as a static CUDA runtime (CuPy, XLA) reaches it.
enum class SyncApi { kRuntime, kDriver };

// One thread's host-sync slot. A slot with blocked_since_ns == 0 is idle.
struct SyncFacts {
  uint64_t blocked_since_ns = 0;
  SyncTarget target = SyncTarget::kDevice;
  uint64_t handle = 0;  // cudaStream_t / cudaEvent_t value; device ordinal for kDevice (0 when unknown).
  int32_t tid = 0;      // the blocked thread: evidence for the dump and report, no rule reads it
  // When the sync was last seen still blocked, on the clock of blocked_since_ns; 0 unknown.
  // Offline (Scope::kJob) the classifier's `now` means nothing, so the dump's detection time
  // is carried here (core/analyze/facts_from_dumps.cc) and a report reads "blocked ... for 5.3s"
  // as the rank saw it when it dumped. Live (Scope::kHost) the detector's `now` is used instead.
  uint64_t seen_ns = 0;
  SyncApi api = SyncApi::kRuntime;  // the API of the call: which name the reports give it
};

// One op as issued by one rank: a collective, or a point-to-point op (p2p_op.h). Two ranks
// agree on collective #N when every field from op to root is equal. A point-to-point op's
// seq counts per peer and direction: the k-th Send from A to B (seq k on A, peer B) matches
// the k-th Recv of B from A (seq k on B, peer A), as NCCL matches them.
struct RecordFacts {
  uint64_t seq = 0;       // collective #N; per-peer number for P2P (0: unknown, not matched)
  // The framework's number for it (shm RecordView::framework_seq): a collective's launch on
  // the communicator, counting a group of collectives once (torch's SeqNum, Flight Recorder's
  // collective_seq_id), a P2P op's position among this rank's P2P ops on it (p2p_seq_id).
  // 0: unknown. Evidence only: no rule reads it.
  uint64_t framework_seq = 0;
  std::string op;         // NCCL API name without the prefix: "AllReduce", "Broadcast", "Send", ...
  uint64_t count = 0;
  int datatype = -1;      // ncclDataType_t value
  int redop = -1;         // ncclRedOp_t value; -1 for ops without a reduction
  int root = -1;          // -1 for ops without a root
  int peer = -1;          // communicator rank of the peer of a P2P op; -1 for collectives
  uint64_t stream = 0;    // cudaStream_t value the op was issued on
  // Which ncclGroupStart/End launched it (0: none). Ops of one group progress together; ops of
  // different groups (torch wraps each send and receive in its own) run in stream order.
  uint32_t group = 0;
  uint64_t enqueue_ns = 0;
  uint64_t complete_ns = 0;  // 0 while not known complete
  // No completion is owed: captured into a graph (it runs when the graph does) or the call
  // failed (it never ran). See EffectiveLastCompleted in completion.h.
  bool never_completes = false;
  // Captured into a CUDA graph (then never_completes too): it runs at each replay of the graph
  // (ReplayFacts), never by itself. Ranks that disagree on it disagree at capture.
  bool captured = false;
  // No completion event could be recorded: whether it completed is unknown. Never counted
  // complete by itself (a later op seen complete still implies it: stream order), and a rank
  // whose oldest pending op is unknown is not counted as waiting.
  bool untracked = false;
  // Ended by its communicator's abort or revoke while pending (untracked is set too: after the
  // abort nothing can tell whether it completed). AsAtAbort (pending.h) undoes the abort.
  bool aborted = false;
  // Where the job issued it: "file:line in function" of the innermost user Python frame
  // (core/stacks/python_call_site.h); empty unless NCCLWATCH_CALL_SITES=1. No rule reads it.
  std::string call_site;
};

// One launch of a CUDA graph that replayed ops this rank captured on the communicator. A
// graph is named across ranks by what they share, never a pointer: its key hashes the
// communicator and the #N and fingerprint of each collective captured into it, in order, so
// every rank that captured the same ops names it alike; `first_seq` and `op_names` say
// which. Replays count per (graph, communicator) on each rank, 1-based, in launch order.
struct ReplayFacts {
  uint64_t graph = 0;
  uint64_t replay = 0;
  uint64_t first_seq = 0;  // #N of the graph's first captured collective here; 0 when it has none
  // The framework's number for that op (RecordFacts::framework_seq, torch's SeqNum taken at
  // capture); 0 unknown. Evidence only.
  uint64_t framework_seq = 0;
  uint32_t ops = 0;                   // ops of the graph on this communicator
  std::vector<std::string> op_names;  // the first of them (up to 8), in capture order
  uint64_t stream = 0;                // the launch stream
  uint64_t enqueue_ns = 0;            // when the rank launched it
  uint64_t complete_ns = 0;           // 0 while not known complete
  bool failed = false;     // the launch failed: nothing ran, no completion is owed
  bool untracked = false;  // no completion event could be recorded: unknown, never complete
};

// Where a communicator stands on one rank. The rules judge communicators that initialise, are
// ready or were left; a suspended one (ncclCommSuspend: idle by request) and one whose init
// failed are evidence only.
enum class CommLifecycle {
  kInitializing,
  kReady,
  kSuspended,
  kInitFailed,
  kFinalized,
  kDestroyed,
  // Aborted or revoked while ops were pending: those ops ended without completing. An abort
  // is not a recovery: the collective a rank was stuck in stays stuck.
  kAborted,
  kRevoked,
};

// One communicator as seen from one rank (one process may hold several ranks of one
// communicator, e.g. after ncclCommInitAll).
struct CommFacts {
  uint64_t comm_hash = 0;
  // The name the framework gave it (ncclConfig_t.commName: torch's process group), raw bytes
  // (escape before printing: format/comm_label.h); empty when none. Evidence only: no rule reads it.
  std::string name;
  int rank = -1;
  int nranks = 0;
  int device = -1;
  uint64_t init_started_ns = 0;
  uint64_t init_done_ns = 0;        // 0 while init has not finished
  uint64_t last_enqueued_seq = 0;   // highest #N this rank has issued
  uint64_t last_completed_seq = 0;  // highest #N known complete on this rank
  int async_error = 0;              // ncclResult_t from ncclCommGetAsyncError
  CommLifecycle lifecycle = CommLifecycle::kReady;
  // Ops whose completion could not be tracked (no event could be recorded): unknown, never
  // counted complete by the tracker itself. Shown in evidence so a reader can weigh them.
  uint64_t untracked_ops = 0;
  std::vector<RecordFacts> records;  // recent collectives, any order
  // Recent point-to-point ops (Send, Recv, ...: p2p_op.h), any order. Kept apart from
  // `records` because their seq counts per peer, outside the collective sequence; their
  // completion is judged op by op (P2PStateOf in completion.h).
  std::vector<RecordFacts> p2p_records;
  // Recent launches of CUDA graphs holding this rank's captured ops of the communicator, any
  // order, and how many older ones are no longer kept: a rank with no replay of a graph among
  // its records launched none only when none was dropped.
  std::vector<ReplayFacts> replays;
  uint64_t replays_dropped = 0;

  // The rules judge it (see CommLifecycle).
  bool judged() const { return lifecycle != CommLifecycle::kSuspended && lifecycle != CommLifecycle::kInitFailed; }
  // This rank destroyed, finalized, aborted or revoked the communicator: it takes no further
  // part, exactly as if its process had exited (a peer still waiting waits for nothing).
  bool left() const { return lifecycle >= CommLifecycle::kFinalized; }
  // Aborted or revoked: what was pending then was stuck, not done.
  bool aborted() const { return lifecycle == CommLifecycle::kAborted || lifecycle == CommLifecycle::kRevoked; }
  // Created by ncclCommSplit or ncclCommShrink: its hash derives from its parent's, so two
  // shrinks of one parent legitimately share one (core/comm_id). false: from a unique id (a
  // root communicator), whose hash is drawn anew for every id; no rank may init one twice.
  bool derived = false;
};

// Which attempt of a job a process belongs to, as its launcher numbered it: a torchrun
// restart (TORCHELASTIC_RESTART_COUNT) within a SLURM requeue (SLURM_RESTART_COUNT). -1:
// the launcher said nothing. Attempts order by requeue, then restart.
struct Attempt {
  int restart = -1;
  int requeue = -1;

  bool known() const { return restart >= 0 || requeue >= 0; }
  friend bool operator==(const Attempt&, const Attempt&) = default;
};

// Whether `earlier` is a strictly earlier attempt than `later` (both known).
inline bool EarlierAttempt(const Attempt& earlier, const Attempt& later) {
  if (!earlier.known() || !later.known()) return false;
  if (earlier.requeue != later.requeue) return earlier.requeue < later.requeue;
  return earlier.restart < later.restart;
}

// How a process that is gone left, as far as it could tell before leaving.
struct ExitFacts {
  bool recorded = false;  // it published an exit; false: killed or crashed without a word
  int status = 0;         // exit status when recorded and not by signal
  int signal = 0;         // fatal signal when known (recorded by the crash path), else 0
  uint64_t exit_ns = 0;   // when (host clock), 0 unknown
};

// What the kernel said a live process was doing when its facts were taken on its host
// (/proc/<pid>/stat, wchan, stack). Evidence only: a rank that cannot answer for itself
// (stopped, stuck in a driver) is described by it, never judged by it.
struct OsFacts {
  char state = 0;  // 'R', 'S', 'D', 'T', 't', 'Z', ...; 0 unknown
  std::string wchan;                      // the kernel function it sleeps in ('D', 'T')
  std::vector<std::string> kernel_stack;  // innermost first, 'D' only, when readable (root)

  // Stopped (SIGSTOP, a debugger) or in uninterruptible sleep: its own threads cannot answer
  // a stack capture, so a peer describes it.
  bool cannot_answer() const { return state == 'T' || state == 't' || state == 'D'; }
};

struct ProcessFacts {
  int32_t pid = 0;
  bool alive = true;
  std::string host;
  int global_rank = -1;  // e.g. from RANK; -1 when unknown
  int local_rank = -1;   // evidence only: LOCAL_RANK and the like; -1 when unknown
  int world_size = 0;    // evidence only: WORLD_SIZE and the like; 0 when unknown
  Attempt attempt;       // of the job, as the launcher numbered it
  ExitFacts exit;        // meaningful when !alive
  OsFacts os;            // meaningful when alive, on the host that built the facts
  std::vector<SyncFacts> syncs;
  std::vector<CommFacts> comms;
};

// What an absent rank means, and whether thresholds are still to be applied.
enum class Scope {
  // Live, one host: ranks not held here may run fine on other hosts, so they are never
  // blamed; every stall must exceed its threshold at `now`.
  kHost,
  // Offline, every dump of a job: a dump exists because a live classifier already saw its
  // threshold pass, so thresholds count as passed and times of different hosts are never
  // compared; a rank with no dump is not known to have joined anything.
  kJob,
};

struct JobFacts {
  Scope scope = Scope::kHost;
  std::vector<ProcessFacts> processes;
};

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_FACTS_H_
