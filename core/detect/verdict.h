// The detector's output: one diagnosis about one communicator (or, for sync_stuck, one
// process), with the evidence needed to explain it to a human.
#ifndef NCCLWATCH_CORE_DETECT_VERDICT_H_
#define NCCLWATCH_CORE_DETECT_VERDICT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/detect/facts.h"
#include "core/format/rank_list.h"

namespace ncclwatch::detect {

// Declared in priority order: when several kinds apply to one communicator, the one
// declared first is reported. kNone is never reported; it exists for parsing and tables.
// kUnknown is never classified: it is a kind read from a file (a dump, a trigger file) that
// this version does not know (a newer writer, or a forged one), named "unknown".
// A stale unique id is certain, like a mismatch, and is the cause of the init hangs it
// brings (stale_id_rule.h), so it comes before every kind of wait.
// A cycle of P2P waits can never resolve, so it comes before the stragglers; a pair of
// posted ops that does not complete (p2p_hang) is judged after every other kind of wait, as
// collective_hang is. The replays of a CUDA graph are judged like collectives, each after its
// collective twin (replay_straggler after straggler, replay_hang after collective_hang).
enum class VerdictKind {
  kMismatch,
  kP2PMismatch,
  kStaleUniqueId,
  kRankExited,
  kInitHang,
  kP2PDeadlock,
  kStraggler,
  kReplayStraggler,
  kP2PStraggler,
  kCollectiveHang,
  kReplayHang,
  kP2PHang,
  kSyncStuck,
  kNone,
  kUnknown,
};

// Stable lowercase names: "mismatch", "p2p_mismatch", "stale_unique_id", "rank_exited",
// "init_hang", "p2p_deadlock", "straggler", "replay_straggler", "p2p_straggler",
// "collective_hang", "replay_hang", "p2p_hang", "sync_stuck", "none", "unknown". Part of the
// output format; never rename.
std::string ToString(VerdictKind kind);
// Inverse of ToString. Returns nullopt for any other string (case-sensitive); a file reader
// reads such a kind as kUnknown.
std::optional<VerdictKind> ParseVerdictKind(std::string_view name);

// Lower is more important.
int Priority(VerdictKind kind);

// p2p_mismatch, p2p_deadlock, p2p_straggler, p2p_hang: their seq numbers a P2P op per peer.
bool IsPointToPointKind(VerdictKind kind);
// replay_straggler, replay_hang: their seq numbers a replay of a CUDA graph (Verdict::graph).
bool IsReplayKind(VerdictKind kind);

// "stream", "event", "device".
std::string ToString(SyncTarget target);
// "runtime", "driver".
std::string ToString(SyncApi api);
// The call a thread blocked in `sync` made: "cudaStreamSynchronize", "cuCtxSynchronize", ...
std::string SyncCallName(const SyncFacts& sync);

// What a verdict waits in, as every one-line output names it: "#5 AllReduce (framework seq 5)"
// (format::FrameworkSeqNote; `p2p`: numbered per peer), or, with a graph label, "replay 5 of
// graph [AllReduce from #2 on comm 0x...]".
std::string WaitSubject(uint64_t seq, const std::string& op, uint64_t framework_seq, bool p2p,
                        const std::string& graph_label);

// What one collective call looked like on one rank; ranks must agree on it at each #N.
struct Fingerprint {
  std::string op;
  uint64_t count = 0;
  int datatype = -1;
  int redop = -1;
  int root = -1;

  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
};

// The state of one rank (one member of the communicator) behind a verdict.
struct RankEvidence {
  int comm_rank = -1;     // -1 for sync_stuck of a process without communicators
  int global_rank = -1;
  int32_t pid = 0;
  std::string host;       // of the process; one process may hold several comm ranks (InitAll)
  int device = -1;        // the communicator's device on this rank; -1 unknown
  bool alive = true;
  uint64_t last_enqueued_seq = 0;
  uint64_t last_completed_seq = 0;
  int async_error = 0;
  std::optional<Fingerprint> at_seq;          // what it issued at the verdict's seq
  std::optional<SyncFacts> blocked_sync;   // its longest-blocked host sync, if any
  // A verdict about a graph (Verdict::graph != 0): the replays of it this rank launched and
  // completed (ReplayProgress, replay_state.h); 0 none or unknown.
  uint64_t replays_launched = 0;
  uint64_t replays_completed = 0;
};

// One rank's part in a P2P verdict: the op it posted (or owes) towards its peer.
struct P2PEvidence {
  int rank = -1;        // communicator rank
  std::string op;       // "Send", "Recv", ...: what it posted, or, when !posted, what it owes
  int peer = -1;        // towards whom (communicator rank)
  uint64_t seq = 0;     // the k-th op of that direction towards that peer
  bool posted = true;   // false: it has not posted its k-th op towards `peer`
  bool complete = false;
  uint64_t count = 0;   // of the posted op
  int datatype = -1;
  uint64_t enqueue_ns = 0;

  friend bool operator==(const P2PEvidence&, const P2PEvidence&) = default;
};

// The one verdict type, from the classifier to every file and report: the live incident
// line, the dump's "verdict" and the trigger file (a subset of the fields, listed where each
// is written: core/dump/README.md, core/watch/trigger_file.h), and `ncclwatch analyze`
// (analyze::Analysis::verdict, written whole by its report). Each field name means one
// thing everywhere: `culprit_ranks` the blamed ranks, `other_ranks` those involved and not
// blamed, `rank_evidence` the state of every visible rank.
struct Verdict {
  VerdictKind kind = VerdictKind::kNone;
  uint64_t comm_hash = 0;     // 0 for sync_stuck
  std::string comm_name;      // the communicator's name as some rank's facts give it; empty when none
  uint64_t seq = 0;           // collective #N (a replay's number when graph != 0); 0 for init_hang and sync_stuck
  // RecordFacts::framework_seq of the op at `seq` (torch's SeqNum for a collective; for p2p_*
  // the first waiter's P2P ordinal); 0 when no rank's record gives it.
  uint64_t framework_seq = 0;
  std::string op;             // op at #N; "init" for init_hang; sync target for sync_stuck; a graph's ops
  // The CUDA graph a verdict is about, by its key (ReplayFacts::graph): replay_straggler,
  // replay_hang, and a rank_exited whose waiters wait in a replay; `seq` is then the replay
  // number. 0: none. `graph_label` names it for people ("graph [AllReduce from #2 on comm 0x...]").
  uint64_t graph = 0;
  std::string graph_label;
  std::vector<int> culprit_ranks;  // communicator ranks (global ranks for sync_stuck) with facts
  // Ranks without facts the verdict points at, as runs of communicator ranks: offline
  // (Scope::kJob), culprits that left no dump; live, the ranks on other hosts a host whose
  // ranks all joined waits for. Kept as runs so a communicator claiming 2^20 ranks costs
  // O(dumps), not O(nranks).
  std::vector<format::RankRange> culprits_without_facts;
  std::vector<int> other_ranks;    // visible communicator ranks involved but not blamed
  uint64_t since_ns = 0;      // onset of the condition (see README for each kind)
  bool partial = false;       // fewer ranks with facts (on this host, or dumps) than nranks
  int nranks = 0;
  int32_t subject_pid = 0;    // the blocked process, for sync_stuck only
  std::string summary;        // one line for humans
  std::vector<RankEvidence> rank_evidence;  // every visible rank of the communicator
  // P2P kinds: each rank of the pair or cycle, in order (waiter first, then what it waits on).
  std::vector<P2PEvidence> p2p;
  std::vector<std::string> notes;   // further facts worth printing
  // Other communicators this verdict accounts for, which get no verdict of their own
  // (stale_unique_id: those the other ranks initialise instead of comm_hash). Live only.
  std::vector<uint64_t> explained_comms;
};

// Whether `v` is about a replay: its seq is a replay number of `graph` (replay_straggler,
// replay_hang, a rank_exited in a replay). A mismatch at capture names a graph too, but its
// seq is the #N of the captured op.
bool AboutReplay(const Verdict& v);
// The graph whose replay `v` waits in (replay_straggler, replay_hang, a rank_exited whose
// waiters wait in a replay); 0 for every other verdict, a mismatch at capture included (it is
// keyed by its #N like any mismatch).
uint64_t ReplayGraphOf(const Verdict& v);
// WaitSubject for `v`: its graph label only when it is about a replay.
std::string WaitSubject(const Verdict& v);
// "replay N of <graph label>" (of "graph <key>" when it has no label), for a verdict about a replay.
std::string ReplaySubject(const Verdict& v);

// Every culprit of `verdict`, sorted: culprit_ranks and culprits_without_facts expanded.
// O(culprits), up to 2^20 for a communicator of ranks without facts: for reports, which print
// them, never for the classifier, which keeps the runs.
std::vector<int> AllCulpritRanks(const Verdict& verdict);

}  // namespace ncclwatch::detect

#endif  // NCCLWATCH_CORE_DETECT_VERDICT_H_
