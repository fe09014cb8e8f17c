// End-to-end: ranks over the sim, under the preload, publish what the issue promises.
#include <catch2/catch.hpp>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/comm_id/comm_hash.h"
#include "core/shm/reader.h"
#include "core/shm/record_flags.h"
#include "rank_job.h"

namespace ncclwatch {
namespace {

using shm::CommView;
using shm::JobSnapshot;
using shm::Op;
using shm::ProcessView;
using shm::RecordView;
using testing::RankJob;

constexpr int kTimeoutMs = 30000;

uint64_t RootHash(const RankJob& job, int index) { return RootCommHash(job.unique_id(index).data(), 128); }

const CommView* FindComm(const ProcessView& p, uint64_t hash) {
  for (const CommView& c : p.comms) {
    if (c.comm_hash == hash) return &c;
  }
  return nullptr;
}

std::vector<RecordView> Collectives(const CommView& c) {
  std::vector<RecordView> out;
  for (const RecordView& r : c.records) {
    if (!shm::IsPointToPoint(r.op)) out.push_back(r);
  }
  return out;
}

// Every live communicator of every process completed everything it enqueued.
bool AllComplete(const JobSnapshot& snap, size_t processes) {
  if (snap.processes.size() != processes) return false;
  for (const ProcessView& p : snap.processes) {
    for (const CommView& c : p.comms) {
      if (c.last_completed_seq != c.last_enqueued_seq) return false;
      for (const RecordView& r : c.records) {
        if (r.complete_ns == 0 && (r.flags & shm::kRecordCaptured) == 0) return false;
      }
    }
  }
  return true;
}

// "commId 0x..." values NCCL printed in its NCCL_DEBUG=INFO Init lines.
std::set<uint64_t> LoggedCommIds(const testing::RankOutput& out) {
  std::set<uint64_t> ids;
  for (const std::string& line : out.lines) {
    const size_t at = line.find("commId 0x");
    if (at != std::string::npos) ids.insert(std::stoull(line.substr(at + 9), nullptr, 16));
  }
  return ids;
}

struct Expected {
  Op op;
  uint64_t count;
  uint8_t datatype;
  uint8_t redop;
  int root;
};

TEST_CASE("every collective, P2P and group is published with seq, fingerprint and completion", "[e2e]") {
  RankJob job("collectives", 2);
  REQUIRE(job.WaitReady(kTimeoutMs));
  const JobSnapshot snap = job.SnapshotWhen([](const JobSnapshot& s) { return AllComplete(s, 2); }, kTimeoutMs);
  REQUIRE(snap.processes.size() == 2);
  const std::vector<Expected> expected = {
      {Op::kAllReduce, 11, ncclFloat, ncclSum, -1},     {Op::kBroadcast, 12, ncclFloat, 0, 1},
      {Op::kBroadcast, 13, ncclInt32, 0, 0},            {Op::kReduce, 14, ncclFloat, ncclMax, 1},
      {Op::kAllGather, 15, ncclFloat, 0, -1},           {Op::kReduceScatter, 16, ncclFloat, ncclProd, -1},
      {Op::kAlltoAll, 17, ncclFloat, 0, -1},            {Op::kGather, 18, ncclFloat, 0, 0},
      {Op::kScatter, 19, ncclFloat, 0, 1},              {Op::kAllReduce, 22, ncclFloat, ncclMin, -1},
      {Op::kBroadcast, 23, ncclFloat, 0, 0},
  };
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r);
    const ProcessView& p = snap.processes[r];
    CHECK(p.global_rank == r);
    CHECK(p.alive);
    REQUIRE(p.comms.size() == 1);
    const CommView& c = p.comms[0];
    CHECK(c.comm_hash == RootHash(job, 0));
    CHECK(LoggedCommIds(job.rank(r)) == std::set<uint64_t>{c.comm_hash});
    CHECK(c.rank == r);
    CHECK(c.nranks == 2);
    CHECK(c.state == shm::CommState::kReady);
    CHECK(c.init_done_ns >= c.init_start_ns);
    CHECK(c.last_enqueued_seq == expected.size());  // Bcast counted once, SimulateEnd not at all
    CHECK(c.last_completed_seq == expected.size());
    const std::vector<RecordView> colls = Collectives(c);
    REQUIRE(colls.size() == expected.size());
    const uint64_t stream = job.rank(r).streams.at(0);
    for (size_t i = 0; i < expected.size(); ++i) {
      INFO("collective #" << i + 1);
      CHECK(colls[i].seq == i + 1);
      CHECK(colls[i].op == expected[i].op);
      CHECK(colls[i].count == expected[i].count);
      CHECK(colls[i].datatype == expected[i].datatype);
      CHECK(colls[i].redop == expected[i].redop);
      CHECK(colls[i].root_or_peer == expected[i].root);
      CHECK(colls[i].stream == stream);
      CHECK(colls[i].enqueue_ns > 0);
      CHECK(colls[i].complete_ns >= colls[i].enqueue_ns);
      CHECK(((colls[i].flags & shm::kRecordInGroup) != 0) == (i >= 9));
      // The framework's number: #10 and #11 are one (nested) group, one launch.
      CHECK(colls[i].framework_seq == (i < 9 ? i + 1 : 10));
    }
    CHECK(c.collective_launches == 10);
    // The group's Send and Recv are P2P ops 1 and 2, in issue order.
    std::vector<uint64_t> p2p_seqs;
    for (const RecordView& record : c.records) {
      if (shm::IsPointToPoint(record.op)) p2p_seqs.push_back(record.framework_seq);
    }
    CHECK(p2p_seqs == std::vector<uint64_t>{1, 2});
    CHECK(c.p2p_launches == 2);
    REQUIRE(c.peers.size() == 1);
    CHECK(c.peers[0].peer == (r ^ 1));
    CHECK(c.peers[0].sends == 1);
    CHECK(c.peers[0].recvs == 1);
    CHECK(c.records.size() == expected.size() + 2);
    // The thread blocked in cudaStreamSynchronize on that stream, and returned.
    bool synced = false;
    for (const shm::SyncView& s : p.sync_slots) {
      if (s.kind == shm::SyncKind::kStream && s.target == stream && s.syncs_completed >= 1) synced = true;
    }
    CHECK(synced);
  }
  const std::vector<int> statuses = job.Finish(kTimeoutMs);
  CHECK(statuses == std::vector<int>{0, 0});
  CHECK(shm::ReadJobSnapshot(job.job_id()).processes.empty());  // removed on clean exit
}

TEST_CASE("split children carry NCCL's derived commHash, rank and size", "[e2e]") {
  RankJob job("split", 4);
  REQUIRE(job.WaitReady(kTimeoutMs));
  const JobSnapshot snap = job.SnapshotWhen([](const JobSnapshot& s) { return AllComplete(s, 4); }, kTimeoutMs);
  REQUIRE(snap.processes.size() == 4);
  const uint64_t parent = RootHash(job, 0);
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    const ProcessView& p = snap.processes[r];
    REQUIRE(p.comms.size() == (r == 0 ? 4u : 3u));
    const CommView* root = FindComm(p, parent);
    const CommView* pairs = FindComm(p, SplitCommHash(parent, 1, r % 2));
    const CommView* all = FindComm(p, SplitCommHash(parent, 3, 0));  // the NOCOLOR split counted too
    REQUIRE(root != nullptr);
    REQUIRE(pairs != nullptr);
    REQUIRE(all != nullptr);
    CHECK(root->last_completed_seq == 1);
    CHECK(pairs->rank == r / 2);
    CHECK(pairs->nranks == 2);
    CHECK(pairs->parent_hash == parent);
    CHECK((pairs->flags & shm::kCommFromSplit) != 0);
    CHECK(pairs->last_enqueued_seq == 2);
    CHECK(pairs->last_completed_seq == 2);
    CHECK(Collectives(*pairs).at(1).count == 32);
    CHECK(all->nranks == 4);
    CHECK(all->rank == 3 - r);  // key = nranks - rank reverses the order
    CHECK(all->last_completed_seq == 1);
    if (r == 0) {
      const CommView* solo = FindComm(p, SplitCommHash(parent, 2, 5));
      REQUIRE(solo != nullptr);
      CHECK(solo->nranks == 1);
      CHECK(solo->last_completed_seq == 1);
    }
  }
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>(4, 0));
}

TEST_CASE("nonblocking communicators publish init, seqs and deferred completions", "[e2e]") {
  RankJob job("nonblocking", 2);
  REQUIRE(job.WaitReady(kTimeoutMs));
  const JobSnapshot snap = job.SnapshotWhen([](const JobSnapshot& s) { return AllComplete(s, 2); }, kTimeoutMs);
  REQUIRE(snap.processes.size() == 2);
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r);
    const ProcessView& p = snap.processes[r];
    REQUIRE(p.comms.size() == 1);
    const CommView& c = p.comms[0];
    CHECK(c.comm_hash == RootHash(job, 0));
    CHECK((c.flags & shm::kCommNonblocking) != 0);
    CHECK(c.state == shm::CommState::kReady);
    CHECK(c.init_done_ns > 0);
    CHECK(c.rank == r);
    CHECK(c.last_enqueued_seq == 3);
    CHECK(c.last_completed_seq == 3);
    for (const RecordView& rec : c.records) CHECK(rec.complete_ns > 0);
  }
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0, 0});
}

TEST_CASE("several communicators in one process (ncclCommInitAll)", "[e2e]") {
  RankJob job("initall", 1);
  // The rank also checked that its current device and pending CUDA error were preserved.
  REQUIRE(job.WaitReady(kTimeoutMs));
  const auto two_complete = [](const JobSnapshot& s) {
    if (s.processes.size() != 1 || s.processes[0].comms.size() != 2) return false;
    for (const CommView& c : s.processes[0].comms) {
      if (c.last_completed_seq < 2) return false;
    }
    return true;
  };
  const JobSnapshot snap = job.SnapshotWhen(two_complete, kTimeoutMs);
  REQUIRE(snap.processes.size() == 1);
  const ProcessView& p = snap.processes[0];
  REQUIRE(p.comms.size() == 2);
  const std::set<uint64_t> logged = LoggedCommIds(job.rank(0));
  REQUIRE(logged.size() == 1);
  for (int d = 0; d < 2; ++d) {
    INFO("comm " << d);
    const CommView& c = p.comms[d];
    CHECK(c.comm_hash == *logged.begin());
    CHECK(c.nranks == 2);
    CHECK(c.rank == c.device);
    CHECK(c.last_enqueued_seq == 3);
    CHECK(c.last_completed_seq == 2);
    REQUIRE(c.records.size() == 3);
    CHECK(c.records[1].count == 51);
    // Issued while the application had an error pending: no event, nothing disturbed.
    CHECK(c.records[2].count == 52);
    CHECK((c.records[2].flags & shm::kRecordUntracked) != 0);
    CHECK(c.records[2].complete_ns == 0);
    CHECK(c.records[0].stream == job.rank(0).streams.at(c.device));
  }
  CHECK(p.comms[0].device != p.comms[1].device);
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0});
}

TEST_CASE("calls from several threads each land in their own communicator", "[e2e]") {
  RankJob job("threads", 2);
  REQUIRE(job.WaitReady(kTimeoutMs));
  const JobSnapshot snap = job.SnapshotWhen([](const JobSnapshot& s) { return AllComplete(s, 2); }, kTimeoutMs);
  REQUIRE(snap.processes.size() == 2);
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r);
    const ProcessView& p = snap.processes[r];
    REQUIRE(p.comms.size() == 2);
    for (int t = 0; t < 2; ++t) {
      const CommView* c = FindComm(p, RootHash(job, t));
      REQUIRE(c != nullptr);
      CHECK(c->rank == r);
      CHECK(c->device == t);
      CHECK(c->last_completed_seq == 5);
      REQUIRE(c->records.size() == 5);
      for (int i = 0; i < 5; ++i) CHECK(c->records[i].count == uint64_t(100 * (t + 1) + i));
      CHECK(c->records[0].stream == job.rank(r).streams.at(t));
    }
  }
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0, 0});
}

TEST_CASE("a child forked mid-job never publishes as its parent", "[e2e]") {
  RankJob job("fork", 2);
  REQUIRE(job.WaitReady(kTimeoutMs));
  const JobSnapshot snap = job.SnapshotWhen([](const JobSnapshot& s) { return AllComplete(s, 2); }, kTimeoutMs);
  REQUIRE(snap.processes.size() == 2);  // the children created no segment of their own
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r);
    const ProcessView& p = snap.processes[r];
    CHECK(p.pid == job.rank(r).pid);
    int child = 0;
    for (const std::string& line : job.rank(r).lines) std::sscanf(line.c_str(), "CHILD %d", &child);
    REQUIRE(child > 0);
    for (const shm::SyncView& s : p.sync_slots) CHECK(s.tid != child);
    REQUIRE(p.comms.size() == 1);
    CHECK(p.comms[0].last_enqueued_seq == 3);  // the parent's segment survived the child's exit
    CHECK(p.comms[0].last_completed_seq == 3);
  }
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0, 0});
}

}  // namespace
}  // namespace ncclwatch

namespace ncclwatch {
namespace {

TEST_CASE("ops captured into a CUDA graph are published without a completion event", "[e2e]") {
  // The sim blocks a real collective on a capturing stream; its no-op mode still lets
  // the hook see the capture.
  RankJob job("capture", 1, {"NCCLSIM_NOOP=1", "NCCLWATCH_RING=20"});
  REQUIRE(job.WaitReady(kTimeoutMs));  // the rank checked that the capture succeeded
  const JobSnapshot snap = job.SnapshotWhen([](const JobSnapshot& s) { return AllComplete(s, 1); }, kTimeoutMs);
  REQUIRE(snap.processes.size() == 1);
  REQUIRE(snap.processes[0].comms.size() == 1);
  CHECK(snap.processes[0].ring_capacity == 32);  // NCCLWATCH_RING, rounded up to a power of two
  const CommView& c = snap.processes[0].comms[0];
  REQUIRE(c.records.size() == 2);
  CHECK((c.records[0].flags & shm::kRecordCaptured) != 0);
  CHECK(c.records[0].complete_ns == 0);
  CHECK((c.records[1].flags & shm::kRecordCaptured) == 0);
  CHECK(c.records[1].complete_ns > 0);
  CHECK(c.last_completed_seq == 2);
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0});
}

}  // namespace
}  // namespace ncclwatch

namespace ncclwatch {
namespace {

TEST_CASE("communicators created inside a group are published once NCCL initialised them", "[e2e]") {
  RankJob job("groupinit", 1);
  REQUIRE(job.WaitReady(kTimeoutMs));
  const JobSnapshot snap = job.SnapshotWhen([](const JobSnapshot& s) { return AllComplete(s, 1); }, kTimeoutMs);
  REQUIRE(snap.processes.size() == 1);
  const ProcessView& p = snap.processes[0];
  REQUIRE(p.comms.size() == 2);
  for (const CommView& c : p.comms) {
    CHECK(c.comm_hash == RootHash(job, 0));
    CHECK(c.state == shm::CommState::kReady);
    CHECK(c.nranks == 2);
    CHECK(c.rank == c.device);
    CHECK(c.last_completed_seq == 1);
    REQUIRE(c.records.size() == 1);
    CHECK(c.records[0].count == 80);
    CHECK(c.records[0].stream == job.rank(0).streams.at(c.device));
  }
  CHECK(p.comms[0].rank != p.comms[1].rank);
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0});
}

}  // namespace
}  // namespace ncclwatch

namespace ncclwatch {
namespace {

TEST_CASE("a stuck stream shows as an incomplete collective and a blocked host sync", "[e2e]") {
  RankJob job("blocked", 1);
  REQUIRE(job.WaitReady(kTimeoutMs));
  const uint64_t stream = job.rank(0).streams.at(0);
  const auto stuck = [stream](const JobSnapshot& s) {
    if (s.processes.size() != 1 || s.processes[0].comms.size() != 1) return false;
    if (s.processes[0].comms[0].last_completed_seq != 1) return false;
    for (const shm::SyncView& sync : s.processes[0].sync_slots) {
      if (sync.blocked_since_ns != 0 && sync.target == stream) return true;
    }
    return false;
  };
  const JobSnapshot snap = job.SnapshotWhen(stuck, kTimeoutMs);
  REQUIRE(stuck(snap));
  const ProcessView& p = snap.processes[0];
  const CommView& c = p.comms[0];
  CHECK(c.last_enqueued_seq == 2);
  REQUIRE(c.records.size() == 2);
  CHECK(c.records[0].complete_ns > 0);
  CHECK(c.records[1].complete_ns == 0);
  for (const shm::SyncView& sync : p.sync_slots) {
    if (sync.blocked_since_ns == 0) continue;
    CHECK(sync.kind == shm::SyncKind::kStream);
    CHECK(sync.blocked_since_ns >= c.records[1].enqueue_ns);
    CHECK(sync.blocked_since_ns <= snap.taken_ns);
  }
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0});  // unblocked: completes and exits
}

// The id RunApi232 printed as "GROW_ID <hex>": the root's id of the grown communicator.
uint64_t GrowHash(const testing::RankOutput& out) {
  for (const std::string& line : out.lines) {
    if (line.rfind("GROW_ID ", 0) != 0) continue;
    unsigned char id[128];
    for (size_t i = 0; i < sizeof id; ++i) id[i] = static_cast<unsigned char>(std::stoi(line.substr(8 + 2 * i, 2), nullptr, 16));
    return RootCommHash(id, sizeof id);
  }
  return 0;
}

const shm::PeerView* FindPeer(const CommView& c, int peer) {
  for (const shm::PeerView& p : c.peers) {
    if (p.peer == peer) return &p;
  }
  return nullptr;
}

TEST_CASE("NCCL 2.29+: config collectives, one-sided ops, a grown and a suspended communicator", "[e2e]") {
  RankJob job("api232", 1);
  REQUIRE(job.WaitReady(kTimeoutMs));
  const uint64_t grown = GrowHash(job.rank(0));
  REQUIRE(grown != 0);
  const auto settled = [grown](const JobSnapshot& s) {
    if (s.processes.size() != 1) return false;
    int complete = 0;
    for (const CommView& c : s.processes[0].comms) complete += c.last_completed_seq == 1 && c.comm_hash != grown;
    for (const CommView& c : s.processes[0].comms) complete += c.last_completed_seq == 1 && c.comm_hash == grown;
    return complete == 5;
  };
  const JobSnapshot snap = job.SnapshotWhen(settled, kTimeoutMs);
  REQUIRE(snap.processes.size() == 1);
  std::vector<const CommView*> a, b;
  for (const CommView& c : snap.processes[0].comms) (c.comm_hash == grown ? b : a).push_back(&c);
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 3);  // rank 1 passed no id: its hash came from ncclCommQueryProperties
  for (const CommView* c : a) {
    INFO("comm A rank " << c->rank);
    CHECK(c->state == shm::CommState::kSuspended);  // suspended, resumed, suspended again
    const std::vector<RecordView> colls = Collectives(*c);
    REQUIRE(colls.size() == 1);
    CHECK(colls[0].op == Op::kAllReduce);  // ncclAllReduceConfig is the same op
    CHECK(colls[0].count == 16);
    CHECK(colls[0].complete_ns != 0);
    const shm::PeerView* peer = FindPeer(*c, 1 - c->rank);
    REQUIRE(peer != nullptr);
    CHECK(peer->sends == (c->rank == 1 ? 1u : 0u));  // ncclSignal counts as a send
    CHECK(peer->recvs == (c->rank == 0 ? 1u : 0u));  // ncclWaitSignal as a recv
    const RecordView& one_sided = c->records.back();
    CHECK(one_sided.op == (c->rank == 0 ? Op::kWaitSignal : Op::kSignal));
    CHECK(one_sided.root_or_peer == 1 - c->rank);
    CHECK(one_sided.complete_ns != 0);
  }
  std::set<int> grown_ranks;
  for (const CommView* c : b) {
    grown_ranks.insert(c->rank);
    CHECK(c->nranks == 3);
    CHECK(c->state == shm::CommState::kReady);
    CHECK(c->last_completed_seq == 1);
  }
  CHECK(grown_ranks == std::set<int>{0, 1, 2});
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0});
}

}  // namespace
}  // namespace ncclwatch
