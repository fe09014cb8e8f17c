// End-to-end over the sim with its libcuda.so.1 on LD_LIBRARY_PATH: jobs that poll and never
// clear the pending CUDA error, several ranks in one process, and many communicators.
// Each hang must be named by the detector from what the ranks publish.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "core/comm_id/comm_hash.h"
#include "core/detect/detector.h"
#include "core/shm/reader.h"
#include "core/shm/record_flags.h"
#include "core/watch/facts_from_snapshot.h"
#include "rank_job.h"

namespace ncclwatch {
namespace {

using shm::CommView;
using shm::JobSnapshot;
using testing::RankJob;

constexpr int kTimeoutMs = 30000;
constexpr uint64_t kNsPerSec = 1'000'000'000ull;

std::vector<std::string> DriverEnv() {
  return {std::string("LD_LIBRARY_PATH=") + NCCLWATCH_SIM_LIB_DIR, "NCCLSIM_DEVICES=4"};
}

// The verdicts a watcher would give two minutes after the snapshot, with a 1 s stall limit.
std::vector<detect::Verdict> VerdictsLater(const JobSnapshot& snap) {
  detect::DetectConfig config;
  config.stall_threshold_ns = kNsPerSec;
  config.adaptive_min_ns = kNsPerSec;
  return detect::Classify(watch::FactsFromSnapshot(snap), config, snap.taken_ns + 120 * kNsPerSec);
}

const detect::Verdict* FindVerdict(const std::vector<detect::Verdict>& verdicts, uint64_t comm_hash) {
  for (const detect::Verdict& v : verdicts) {
    if (v.comm_hash == comm_hash) return &v;
  }
  return nullptr;
}

const CommView* FindComm(const shm::ProcessView& p, uint64_t hash) {
  for (const CommView& c : p.comms) {
    if (c.comm_hash == hash && c.state == shm::CommState::kReady) return &c;
  }
  return nullptr;
}

bool HasLine(const testing::RankOutput& out, const std::string& text) {
  return std::find(out.lines.begin(), out.lines.end(), text) != out.lines.end();
}

TEST_CASE("a job that leaves cudaErrorNotReady pending is tracked, and its straggler named", "[watch_scale]") {
  RankJob job("polling", 2, DriverEnv());
  REQUIRE(job.WaitReady(kTimeoutMs));
  // The rank itself checked cudaPeekAtLastError == cudaErrorNotReady before and after the hooks.
  CHECK(HasLine(job.rank(0), "STILL_PENDING"));
  const uint64_t hash = RootCommHash(job.unique_id(0).data(), 128);
  const auto settled = [hash](const JobSnapshot& s) {
    if (s.processes.size() != 2) return false;
    const CommView* c0 = FindComm(s.processes[0], hash);
    const CommView* c1 = FindComm(s.processes[1], hash);
    return c0 != nullptr && c1 != nullptr && c0->last_completed_seq == 1 && c1->last_completed_seq == 1 &&
           c0->last_enqueued_seq == 2;
  };
  const JobSnapshot snap = job.SnapshotWhen(settled, kTimeoutMs);
  REQUIRE(settled(snap));
  const CommView& c0 = *FindComm(snap.processes[0], hash);
  REQUIRE(c0.records.size() == 2);
  // Issued while NotReady was pending: tracked (an event is pending), not untracked.
  CHECK((c0.records[1].flags & shm::kRecordUntracked) == 0);
  CHECK(c0.records[1].complete_ns == 0);
  CHECK(c0.untracked_ops == 0);
  const std::vector<detect::Verdict> verdicts = VerdictsLater(snap);
  const detect::Verdict* v = FindVerdict(verdicts, hash);
  REQUIRE(v != nullptr);
  CHECK(v->kind == detect::VerdictKind::kStraggler);
  CHECK(v->culprit_ranks == std::vector<int>{1});
  CHECK(v->seq == 2);
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0, 0});
}

TEST_CASE("a polling job whose transport hangs is tracked, and its collective_hang named", "[watch_scale]") {
  std::vector<std::string> env = DriverEnv();
  env.push_back("NCCLSIM_FAULT=hang:seq=2");
  RankJob job("polling_hang", 2, env);
  REQUIRE(job.WaitReady(kTimeoutMs));
  // Each rank checked cudaPeekAtLastError == cudaErrorNotReady after polling the hung #2.
  CHECK(HasLine(job.rank(0), "STILL_PENDING"));
  CHECK(HasLine(job.rank(1), "STILL_PENDING"));
  const uint64_t hash = RootCommHash(job.unique_id(0).data(), 128);
  const auto settled = [hash](const JobSnapshot& s) {
    if (s.processes.size() != 2) return false;
    for (const shm::ProcessView& p : s.processes) {
      const CommView* c = FindComm(p, hash);
      if (c == nullptr || c->last_enqueued_seq != 2 || c->last_completed_seq != 1) return false;
    }
    return true;
  };
  const JobSnapshot snap = job.SnapshotWhen(settled, kTimeoutMs);
  REQUIRE(settled(snap));
  for (const shm::ProcessView& p : snap.processes) {
    const CommView& c = *FindComm(p, hash);
    REQUIRE(c.records.size() == 2);
    // Issued while the job polls: tracked (an event is pending), never counted complete.
    CHECK((c.records[1].flags & shm::kRecordUntracked) == 0);
    CHECK(c.records[1].complete_ns == 0);
    CHECK(c.untracked_ops == 0);
  }
  const std::vector<detect::Verdict> verdicts = VerdictsLater(snap);
  const detect::Verdict* v = FindVerdict(verdicts, hash);
  REQUIRE(v != nullptr);
  CHECK(v->kind == detect::VerdictKind::kCollectiveHang);
  CHECK(v->culprit_ranks == std::vector<int>{0, 1});
  CHECK(v->seq == 2);
  CHECK(v->op == "AllReduce");
  // After release each rank checks that cudaErrorNotReady is still pending, then aborts.
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0, 0});
}

TEST_CASE("one process driving 4 ranks publishes 4 ranks, and its straggler thread is named", "[watch_scale]") {
  RankJob job("initall4", 1, DriverEnv());
  REQUIRE(job.WaitReady(kTimeoutMs));
  const auto settled = [](const JobSnapshot& s) {
    if (s.processes.size() != 1 || s.processes[0].comms.size() != 4) return false;
    for (const CommView& c : s.processes[0].comms) {
      if (c.last_completed_seq != 1 || c.last_enqueued_seq != (c.rank == 3 ? 1u : 2u)) return false;
    }
    return true;
  };
  const JobSnapshot snap = job.SnapshotWhen(settled, kTimeoutMs);
  REQUIRE(settled(snap));
  std::set<int> ranks;
  for (const CommView& c : snap.processes[0].comms) {
    ranks.insert(c.rank);
    CHECK(c.nranks == 4);
    CHECK(c.comm_hash == snap.processes[0].comms[0].comm_hash);
  }
  CHECK(ranks == std::set<int>{0, 1, 2, 3});
  const std::vector<detect::Verdict> verdicts = VerdictsLater(snap);
  const detect::Verdict* v = FindVerdict(verdicts, snap.processes[0].comms[0].comm_hash);
  REQUIRE(v != nullptr);
  CHECK(v->kind == detect::VerdictKind::kStraggler);
  CHECK(v->culprit_ranks == std::vector<int>{3});
  CHECK(v->seq == 2);
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0});
}

TEST_CASE("40 communicators created and destroyed while one hangs: the hang is named", "[watch_scale]") {
  RankJob job("manycomms", 2, DriverEnv());
  REQUIRE(job.WaitReady(kTimeoutMs));
  const uint64_t parent = RootCommHash(job.unique_id(0).data(), 128);
  const uint64_t hung = SplitCommHash(parent, 41, 40);  // 41st split of the parent, color 40
  const auto settled = [hung](const JobSnapshot& s) {
    if (s.processes.size() != 2) return false;
    const CommView* c0 = FindComm(s.processes[0], hung);
    return c0 != nullptr && FindComm(s.processes[1], hung) != nullptr && c0->last_enqueued_seq == 1;
  };
  const JobSnapshot snap = job.SnapshotWhen(settled, kTimeoutMs);
  REQUIRE(settled(snap));
  for (const shm::ProcessView& p : snap.processes) {
    CHECK(p.comms_unwatched == 0);  // every one of the 42 communicators had a slot
  }
  const CommView& c0 = *FindComm(snap.processes[0], hung);
  CHECK(c0.last_completed_seq == 0);
  REQUIRE(c0.records.size() == 1);
  CHECK(c0.records[0].complete_ns == 0);
  const std::vector<detect::Verdict> verdicts = VerdictsLater(snap);
  const detect::Verdict* v = FindVerdict(verdicts, hung);
  REQUIRE(v != nullptr);
  CHECK(v->kind == detect::VerdictKind::kStraggler);
  CHECK(v->culprit_ranks == std::vector<int>{1});
  CHECK(v->seq == 1);
  CHECK(job.Finish(kTimeoutMs) == std::vector<int>{0, 0});
}

}  // namespace
}  // namespace ncclwatch
