#include "preload/observe/graph_registry.h"

#include "preload/lifecycle/log.h"
#include "preload/observe/comm_registry.h"

namespace ncclwatch::preload {
namespace {

// splitmix64's finalizer: every input bit moves every output bit.
uint64_t Mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t Combine(uint64_t hash, uint64_t value) { return Mix(hash ^ Mix(value + 0x9e3779b97f4a7c15ULL)); }

// The part a launch publishes on `comm`, from the ops captured there.
shm::ReplayEntry ReplayEntryOf(uint64_t comm_hash, const std::vector<CapturedOp>& ops) {
  shm::ReplayEntry entry;
  entry.graph = GraphKeyOf(comm_hash, ops);
  entry.ops = static_cast<uint32_t>(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    entry.op_codes = shm::AddReplayOpCode(entry.op_codes, static_cast<unsigned>(i), ops[i].fingerprint.op);
    if (entry.first_seq == 0 && ops[i].seq != 0) {
      entry.first_seq = ops[i].seq;
      entry.first_framework_seq = ops[i].framework_seq;
    }
  }
  if (entry.first_seq == 0 && !ops.empty()) entry.first_framework_seq = ops.front().framework_seq;
  return entry;
}

}  // namespace

uint64_t GraphKeyOf(uint64_t comm_hash, const std::vector<CapturedOp>& ops) {
  uint64_t key = Combine(0x6e63636c67726170ULL, comm_hash);  // "ncclgrap"
  // Collectives only: a P2P op's peer and direction differ from rank to rank.
  for (const CapturedOp& op : ops) {
    if (op.seq == 0) continue;
    const shm::OpFingerprint& f = op.fingerprint;
    key = Combine(key, op.seq);
    key = Combine(key, shm::PackOpAndTypes(f.op, f.datatype, f.redop));
    key = Combine(key, f.count);
    key = Combine(key, static_cast<uint32_t>(f.root_or_peer));
  }
  return key != 0 ? key : 1;
}

uint32_t GraphRegistry::Home(uint64_t exec) {
  return static_cast<uint32_t>(((exec >> 4) * 0x9e3779b97f4a7c15ULL) >> 52) % kExecCapacity;
}

const ExecGraph* GraphRegistry::Find(uint64_t exec) const {
  if (live_.load(std::memory_order_acquire) == 0 || exec <= kTombstone) return nullptr;
  for (uint32_t probe = 0, i = Home(exec); probe < kMaxProbes; ++probe, i = (i + 1) % kExecCapacity) {
    const uint64_t key = buckets_[i].exec.load(std::memory_order_acquire);
    if (key == exec) return buckets_[i].graph.load(std::memory_order_acquire);
    if (key == 0) return nullptr;
  }
  return nullptr;
}

void GraphRegistry::AddCaptured(uint64_t graph, uint64_t capture_id, CommEntry* comm, const CapturedOp* ops,
                                size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  Captured& captured = graphs_[graph];
  if (captured.capture_id != capture_id) {
    captured.capture_id = capture_id;
    captured.comms.clear();
  }
  auto it = captured.comms.begin();
  while (it != captured.comms.end() && it->first != comm) ++it;
  if (it == captured.comms.end()) it = captured.comms.insert(it, {comm, {}});
  it->second.insert(it->second.end(), ops, ops + count);
}

void GraphRegistry::ForgetGraph(uint64_t graph) {
  std::lock_guard<std::mutex> lock(mu_);
  graphs_.erase(graph);
}

ExecGraph* GraphRegistry::NewExecGraph() {
  if (!free_exec_graphs_.empty()) {
    ExecGraph* reused = free_exec_graphs_.back();
    free_exec_graphs_.pop_back();
    *reused = ExecGraph{};
    return reused;
  }
  exec_graphs_.push_back(std::make_unique<ExecGraph>());
  return exec_graphs_.back().get();
}

std::atomic<uint64_t>* GraphRegistry::LaunchCounter(CommEntry* comm, uint64_t key) {
  std::unique_ptr<std::atomic<uint64_t>>& counter = launch_counters_[{comm, key}];
  if (!counter) counter = std::make_unique<std::atomic<uint64_t>>(0);
  return counter.get();
}

void GraphRegistry::Instantiated(uint64_t exec, uint64_t graph) {
  if (exec <= kTombstone) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto captured = graphs_.find(graph);
    if (captured != graphs_.end() && !captured->second.comms.empty()) {
      ExecGraph* built = NewExecGraph();
      for (const auto& [comm, ops] : captured->second.comms) {
        if (built->parts == kMaxCommsPerGraph) break;
        GraphPart& part = built->part[built->parts++];
        part.comm = comm;
        part.replay = ReplayEntryOf(comm->comm_hash, ops);
        part.launches = LaunchCounter(comm, part.replay.graph);
      }
      built->device = built->part[0].comm->device.load(std::memory_order_relaxed);
      Publish(exec, built);
      return;
    }
  }
  ForgetExec(exec);  // no NCCL op: a reused handle, or an update to a graph without any
}

void GraphRegistry::Publish(uint64_t exec, ExecGraph* graph) {
  uint32_t reuse = kExecCapacity;
  for (uint32_t probe = 0, i = Home(exec); probe < kMaxProbes; ++probe, i = (i + 1) % kExecCapacity) {
    const uint64_t key = buckets_[i].exec.load(std::memory_order_relaxed);
    if (key == exec) {  // updated, or its handle reused after a destroy we did not see
      free_exec_graphs_.push_back(buckets_[i].graph.load(std::memory_order_relaxed));
      buckets_[i].graph.store(graph, std::memory_order_release);
      return;
    }
    if (key == kTombstone && reuse == kExecCapacity) reuse = i;
    if (key == 0) {
      if (reuse == kExecCapacity) reuse = i;
      break;
    }
  }
  if (reuse == kExecCapacity) {
    free_exec_graphs_.push_back(graph);
    if (!full_logged_) {
      full_logged_ = true;
      Log(LogLevel::kInfo, "more than " + std::to_string(kExecCapacity) +
                               " CUDA graphs with NCCL ops at once (or too many near one another in the table): the "
                               "launches of further ones are not watched");
    }
    return;
  }
  buckets_[reuse].graph.store(graph, std::memory_order_relaxed);
  buckets_[reuse].exec.store(exec, std::memory_order_release);
  live_.fetch_add(1, std::memory_order_release);
}

void GraphRegistry::ForgetExec(uint64_t exec) {
  if (exec <= kTombstone || live_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t probe = 0, i = Home(exec); probe < kMaxProbes; ++probe, i = (i + 1) % kExecCapacity) {
    const uint64_t key = buckets_[i].exec.load(std::memory_order_relaxed);
    if (key == exec) {
      buckets_[i].exec.store(kTombstone, std::memory_order_release);
      free_exec_graphs_.push_back(buckets_[i].graph.load(std::memory_order_relaxed));
      // The last one gone: the tombstones go too (a launch that still probes finds nothing).
      if (live_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        for (Bucket& bucket : buckets_) bucket.exec.store(0, std::memory_order_relaxed);
      }
      return;
    }
    if (key == 0) return;
  }
}

}  // namespace ncclwatch::preload
