// Which NCCL ops each CUDA graph of the process holds, from capture to launch.
//
// At capture, an op on a capturing stream is recorded once (kRecordCaptured) and noted under
// the graph its capture records into (AddCaptured; the driver tells the graph,
// DriverApi::CaptureGraph); an op may be on any stream of the capture (torch issues its
// collectives on an internal NCCL stream that joined the capture), and a graph's ops on several
// communicators. Instantiating the graph (Instantiated) names, per communicator, what a
// launch of the executable graph replays there: the graph's key on that communicator (a hash of
// the communicator and of each captured collective's #N and fingerprint, in order: what every
// rank that captured the same ops shares, never a pointer), its first collective's #N, its ops,
// and the counter of its replays. A launch (graph_observer.h) finds all of it with one lock-free
// lookup of the executable graph (Find); an executable graph that holds no NCCL op costs that
// lookup only.
//
// Capture, instantiation and destruction take a mutex (they are rare and allocate); Find does
// not. Entries of destroyed executable graphs are kept for reuse, never freed, so that a
// launch that raced a destroy of another graph reads valid memory.
//
// A graph's ops are those of the last capture into it: a new capture id under a known graph
// handle is a new graph whose handle CUDA reused (the old one destroyed where no hook saw it, or
// its capture invalidated), not an append.
//
// Limits: a graph holding ops of more than kMaxCommsPerGraph communicators publishes replays of
// the first kMaxCommsPerGraph; ops captured into a graph that already held ops of an earlier
// capture (cudaStreamBeginCaptureToGraph) replace them; more than kExecCapacity executable graphs with NCCL ops alive at
// once are not watched beyond (one info line). A graph that reaches an executable graph other
// than by instantiation (a clone, a child graph node of another graph) is not followed: its
// launches publish nothing, as before this registry existed.
#ifndef NCCLWATCH_PRELOAD_OBSERVE_GRAPH_REGISTRY_H_
#define NCCLWATCH_PRELOAD_OBSERVE_GRAPH_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/shm/comm_slot.h"

namespace ncclwatch::preload {

struct CommEntry;

// One op as captured: what the graph's key is made of.
struct CapturedOp {
  shm::OpFingerprint fingerprint;  // stream aside (a pointer of this process)
  uint64_t seq = 0;                // its collective #N; 0 for a P2P op (numbered per peer)
  uint64_t framework_seq = 0;
};

// One communicator's share of a graph: what each launch publishes there.
struct GraphPart {
  CommEntry* comm = nullptr;
  shm::ReplayEntry replay;  // all but the replay number and the stream, which each launch sets
  std::atomic<uint64_t>* launches = nullptr;  // replays of (key, communicator) in this process
};

inline constexpr int kMaxCommsPerGraph = 8;

struct ExecGraph {
  int parts = 0;
  int device = -1;  // of the first part's communicator: where the launch's event is made
  GraphPart part[kMaxCommsPerGraph];
};

// The graph's key on `comm_hash` from its ops there, in capture order (never 0).
uint64_t GraphKeyOf(uint64_t comm_hash, const std::vector<CapturedOp>& ops);

class GraphRegistry {
 public:
  static constexpr uint32_t kExecCapacity = 4096;

  // `count` ops of `comm`, captured (in order) into `graph` by the capture `capture_id`.
  void AddCaptured(uint64_t graph, uint64_t capture_id, CommEntry* comm, const CapturedOp* ops, size_t count);
  // The graph was destroyed: its handle may come back for another graph.
  void ForgetGraph(uint64_t graph);
  // `exec` was instantiated from `graph` (or updated to it, cudaGraphExecUpdate).
  void Instantiated(uint64_t exec, uint64_t graph);
  void ForgetExec(uint64_t exec);

  // What a launch of `exec` replays; nullptr when it holds no NCCL op we saw captured.
  const ExecGraph* Find(uint64_t exec) const;

 private:
  static constexpr uint64_t kTombstone = 1;
  // An executable graph lives within this many buckets of its home: a launch of a graph without
  // NCCL ops probes at most that many, however many destroyed graphs left tombstones.
  static constexpr uint32_t kMaxProbes = 64;
  static uint32_t Home(uint64_t exec);
  // Under mu_.
  void Publish(uint64_t exec, ExecGraph* graph);
  ExecGraph* NewExecGraph();
  std::atomic<uint64_t>* LaunchCounter(CommEntry* comm, uint64_t key);

  // The ops one capture recorded into a graph, per communicator in order of first op.
  struct Captured {
    uint64_t capture_id = 0;
    std::vector<std::pair<CommEntry*, std::vector<CapturedOp>>> comms;
  };

  struct Bucket {
    std::atomic<uint64_t> exec{0};
    std::atomic<ExecGraph*> graph{nullptr};
  };
  std::atomic<uint32_t> live_{0};  // executable graphs with NCCL ops: 0 makes Find one load
  Bucket buckets_[kExecCapacity];

  std::mutex mu_;
  std::unordered_map<uint64_t, Captured> graphs_;
  std::vector<std::unique_ptr<ExecGraph>> exec_graphs_;  // never freed
  std::vector<ExecGraph*> free_exec_graphs_;
  std::map<std::pair<CommEntry*, uint64_t>, std::unique_ptr<std::atomic<uint64_t>>> launch_counters_;
  bool full_logged_ = false;
};

}  // namespace ncclwatch::preload

#endif  // NCCLWATCH_PRELOAD_OBSERVE_GRAPH_REGISTRY_H_
