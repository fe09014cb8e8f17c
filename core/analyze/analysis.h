// The result of a post-mortem analysis: one merged verdict over every rank's dump, and the
// evidence behind it. Produced by Analyze (analyzer.h), rendered by report.h. Ranks are
// communicator ranks of the verdict's communicator unless the field says "global".
#ifndef NCCLWATCH_CORE_ANALYZE_ANALYSIS_H_
#define NCCLWATCH_CORE_ANALYZE_ANALYSIS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/detect/facts.h"
#include "core/detect/verdict.h"

namespace ncclwatch::analyze {

// Whether the incidents behind the dumps are over (resolution.h): each rank that dumped saw
// its incident complete after all.
struct VerdictResolution {
  bool resolved = false;
  uint64_t resolved_after_ns = 0;  // the longest detection -> completion; 0 when not resolved
};

// One rank of the verdict's communicator.
struct RankRow {
  int rank = -1;
  bool has_dump = false;
  int global_rank = -1;
  std::string host;
  int32_t pid = 0;
  bool init_done = false;
  uint64_t last_joined = 0;     // last enqueued collective number
  uint64_t last_completed = 0;
  // A verdict about a replay of a CUDA graph: the replays of that graph this rank launched and
  // completed (detect::ProgressOf); 0 otherwise.
  uint64_t replays_launched = 0;
  uint64_t replays_completed = 0;
  std::string state;            // see BuildRankRows() in evidence.h
  int async_error = 0;          // ncclResult_t
  // Ages at this rank's own dump (its host's clock; never compared across hosts), unknown
  // (nullopt) when the dump lacks the times:
  // how long it had waited in its oldest incomplete collective; nullopt when it waits in none;
  std::optional<uint64_t> waiting_ns;
  // how long before its dump its last completed collective completed.
  std::optional<uint64_t> last_progress_ns;
};

// p2p_* verdicts: one rank of the pair or cycle, and its op towards its peer.
struct P2PRow {
  int rank = -1;
  std::string op;       // what it posted, or (posted == false) what it owes
  int peer = -1;        // towards whom
  uint64_t seq = 0;     // its k-th op of that direction towards that peer
  bool posted = true;
  bool complete = false;
  uint64_t count = 0;   // of a posted op
  int datatype = -1;
};

struct FingerprintCell {
  int rank = -1;
  bool known = false;  // false when the rank has no record of this collective number
  std::string op;
  uint64_t count = 0;
  int datatype = -1;
  int redop = -1;
  int root = -1;
};

struct FingerprintRow {
  uint64_t seq = 0;
  bool differs = false;
  std::vector<FingerprintCell> cells;  // one per rank with a dump
};

// One frame of a thread as reported: a Python frame (file and line) or a native one (module
// and offset).
struct FrameView {
  bool python = false;
  std::string function;  // "??" when unknown
  std::string file;      // Python frames
  int line = 0;
  std::string module;    // native frames: the object's basename
  uint64_t offset = 0;   // native frames: pc minus the module's load base
};

// One thread, or several with identical frames (collapsed), of one process (thread_views.h).
struct ThreadStackView {
  std::vector<int32_t> tids;         // native thread ids; empty for a Python thread no native one runs
  std::vector<std::string> names;    // their distinct names (/proc comm), in order
  uint64_t python_thread_id = 0;     // Python's id of a thread known only from the Python stacks
  std::string python_name;           // "MainThread" where known
  bool active = false;               // running (state R) rather than waiting
  bool answered = true;              // false: it did not answer the capture signal (frames empty)
  std::string state;                 // /proc state letter of the first thread
  std::string blocked_in;            // "cudaStreamSynchronize for 5.3 s", or the innermost shown frame's function
  bool in_host_sync = false;         // blocked_in names a host sync (the header says "blocked in")
  bool python_merged = false;        // its Python frames are merged in where the interpreter runs
  std::vector<FrameView> frames;     // innermost first
  int hidden_frames = 0;             // internal, trampoline, libc-wait and interpreter frames left out
};

// Stacks shared by one or more culprit ranks (processes with identical thread views are grouped).
struct StackGroup {
  std::vector<int> ranks;
  std::string where;                 // "host:pid" of the first rank of the group
  size_t processes = 1;              // distinct processes behind `ranks` (one drives several ranks)
  std::vector<ThreadStackView> threads;
  size_t threads_total = 0;          // threads of the first rank's process
  size_t threads_not_shown = 0;      // of those, in no view
  std::string python_unavailable;    // reason, when Python stacks were not captured
};

// A process behind culprit ranks, and what is known of it: from its own dump, from the dump a
// peer wrote on its behalf (stopped, in the kernel, gone), or nothing (no dump at all).
enum class ProcessState {
  kDumped,     // it wrote its own dump: its stacks are in the report
  kStopped,    // alive but stopped (state T/t: SIGSTOP, a debugger): described by a peer
  kInKernel,   // alive in uninterruptible sleep (state D: a driver): described by a peer
  kZombie,     // exited, not yet reaped by its parent (state Z)
  kGone,       // exited or killed: its exit evidence is known
  kNoDump,     // no dump of it, by itself or any peer: not known to have started
};

struct CulpritProcess {
  std::vector<int> ranks;       // its culprit ranks: communicator ranks (global ranks for sync_stuck)
  std::vector<int> comm_ranks;  // every rank of the verdict's communicator it drives (one: most jobs)
  std::vector<int> devices;     // the devices of those ranks, when known
  int global_rank = -1;
  std::string host;             // empty for kNoDump
  int32_t pid = 0;              // 0 for kNoDump
  ProcessState state = ProcessState::kNoDump;
  detect::OsFacts os;           // kStopped, kInKernel, kZombie: what the kernel said
  detect::ExitFacts exit;       // kGone
  std::string described_by;     // "host:pid (rank R)" of the peer that wrote its dump; empty: itself;
                                // kNoDump: the hosts and ranks that waited on it, "host0 (ranks 0-1)"
  bool python = false;          // a Python process (its stacks, or its executable, say so)
  std::string where;            // its innermost user frame, "in load_batch (/app/data.py:40)"; "" unknown
  std::string next;             // the command to run next about it, or what to look at
};

// Something that happened after the incident the analysis is about (Analysis::then).
struct AfterEvent {
  enum class Kind { kTeardown, kExit, kIncident };
  Kind kind = Kind::kTeardown;
  std::string who;              // "rank 1", "process vm:28891"
  std::string host;
  int32_t pid = 0;
  std::string what;             // "SIGTERM", "ncclCommAbort", "exited with status 1", "rank_exited"
  std::string text;             // "SIGTERM to rank 1", "rank 1 exited with status 1"
  std::optional<uint64_t> after_ns;  // since the stall began on its host (that host's clock); nullopt unknown
  uint64_t unix_ns = 0;         // when its dump was written, wall clock: the order of events
};

// Another attempt of the same run (torchrun restart, SLURM requeue), one line each.
struct AttemptLine {
  detect::Attempt attempt;
  detect::VerdictKind kind = detect::VerdictKind::kNone;
  std::vector<int> culprit_ranks;
  bool resolved = false;
  size_t dumps = 0;
  std::string line;             // "attempt 0: rank_exited: rank 1 at #6 AllReduce, exited with status 1"
};

// What the set of dumps says about the whole read: exit status 0, 3 or 4 of `analyze`.
enum class Outcome {
  kNoHang,        // no attempt of any run has a verdict
  kHang,          // some verdict did not resolve
  kResolvedHang,  // verdicts, every one resolved: slow, not hung
};

// The launch the analysis is about (runs.h).
struct RunInfo {
  std::vector<std::string> hosts;
  std::vector<std::string> job_ids;
  size_t attempts = 1;
  size_t dumps = 0;               // every dump of the run, judged or not
  uint64_t first_unix_ns = 0;     // its first and last dump, wall clock
  uint64_t last_unix_ns = 0;
};

struct Hint {
  std::string id;      // stable: absent_ranks, p2p_transport, data_loading, broadcast_divergence, collective_divergence,
                       // init_transport, old_kernel, crash, uneven_inputs, partial_collective
  std::string advice;
  std::vector<std::string> evidence;
};

struct Analysis {
  // The one classifier's first verdict over the facts of every dump (kind kNone, with a
  // summary saying so, when it has none). Its culprits are culprit_ranks (ranks with a dump)
  // and culprits_without_facts (ranks without one); detect::AllCulpritRanks lists both.
  detect::Verdict verdict;
  VerdictResolution resolution;
  size_t dumps_read = 0;
  std::vector<std::string> rejected;     // one-line errors of unusable files
  std::vector<std::string> hosts;
  std::vector<int> missing_ranks;        // ranks of the verdict's communicator without a dump
  std::vector<RankRow> ranks;            // every rank of the verdict's communicator
  std::vector<FingerprintRow> fingerprints;  // mismatch only: collectives around #seq
  std::vector<P2PRow> p2p;               // p2p_* only: each rank of the pair or cycle
  std::vector<StackGroup> stacks;        // culprits first
  size_t culprits_without_stacks = 0;
  std::vector<Hint> hints;
  std::vector<std::string> notes;

  // The answer first: the culprits' processes (one entry per process, however many ranks it
  // drives) and the next step; then what happened after the incident, the run's other
  // attempts, and the other runs found in the same directories.
  std::vector<CulpritProcess> culprit_processes;
  std::string next_step;                 // "" when nothing better than the hints is known
  std::vector<AfterEvent> then;          // by time
  size_t dumps_after = 0;                // dumps of what followed (teardown, later incidents)
  detect::Attempt attempt;               // the attempt this analysis is about
  std::vector<AttemptLine> other_attempts;  // the run's other attempts, earliest first
  RunInfo run;
  Outcome outcome = Outcome::kNoHang;    // of this run, every attempt
  std::vector<Analysis> other_runs;      // unrelated runs in the same directories, most recent first
};

// The outcome of everything read: the worst of `a` and its other runs.
Outcome OverallOutcome(const Analysis& a);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_ANALYSIS_H_
