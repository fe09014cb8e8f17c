#include "core/analyze/facts_from_dumps.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_set>

#include "core/detect/completion.h"
#include "core/detect/p2p_op.h"

namespace ncclwatch::analyze {
namespace {

detect::RecordFacts ToRecordFacts(const dump::CollectiveRecord& r) {
  detect::RecordFacts out;
  out.seq = r.seq;
  out.op = r.op;
  out.count = r.count;
  out.datatype = r.datatype;
  out.redop = r.redop;
  out.root = r.root;
  out.peer = detect::IsPointToPoint(r.op) ? r.peer : -1;
  out.stream = r.stream;
  out.group = static_cast<uint32_t>(std::min<uint64_t>(r.group, 0x10000));  // a hostile value stays a group
  out.enqueue_ns = r.enqueue_ns;
  out.complete_ns = r.complete_ns;
  out.never_completes = r.never_completes;
  out.untracked = r.untracked;
  return out;
}

// The dump's collectives in ascending #N, the first record of each number only (a hostile
// dump may repeat or reorder them).
std::vector<detect::RecordFacts> CollectiveRecords(const dump::CommDump& comm) {
  std::vector<detect::RecordFacts> records;
  std::unordered_set<uint64_t> seen;
  for (const dump::CollectiveRecord& r : comm.records) {
    if (detect::IsPointToPoint(r.op) || !seen.insert(r.seq).second) continue;
    records.push_back(ToRecordFacts(r));
  }
  std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return records;
}

// P2P completion and matching compare each op with the others of its communicator (stream
// order): a hostile dump's million records must not make that quadratic. The watchdog writes
// 64 records per communicator (kRecordsPerCommInDump), so the newest 256 lose nothing real.
constexpr size_t kMaxP2PRecordsPerComm = 256;

// The dump's newest P2P ops, the first record of each (direction, peer, number) only.
std::vector<detect::RecordFacts> P2PRecords(const dump::CommDump& comm) {
  std::vector<detect::RecordFacts> records;
  std::set<std::tuple<detect::P2PDirection, int, uint64_t>> seen;
  for (const dump::CollectiveRecord& r : comm.records) {
    const detect::P2PDirection direction = detect::P2PDirectionOf(r.op);
    if (direction == detect::P2PDirection::kNone || !seen.emplace(direction, r.peer, r.seq).second) continue;
    records.push_back(ToRecordFacts(r));
  }
  if (records.size() > kMaxP2PRecordsPerComm) {
    records.erase(records.begin(), records.end() - static_cast<std::ptrdiff_t>(kMaxP2PRecordsPerComm));
  }
  return records;
}

detect::CommFacts ToCommFacts(const dump::CommDump& comm) {
  detect::CommFacts out;
  out.comm_hash = comm.comm_hash;
  out.rank = comm.rank;
  out.nranks = comm.nranks;
  out.device = comm.device;
  out.init_started_ns = comm.init_started_ns;
  out.init_done_ns = comm.init_done_ns;
  out.last_enqueued_seq = comm.last_enqueued_seq;
  out.async_error = comm.async_error;
  out.left = comm.left;
  out.untracked_ops = comm.untracked_ops;
  out.records = CollectiveRecords(comm);
  out.p2p_records = P2PRecords(comm);
  out.last_completed_seq = detect::EffectiveLastCompleted(comm.last_completed_seq, out.records);
  return out;
}

detect::SyncFacts ToSyncFacts(const dump::HostSync& sync) {
  detect::SyncFacts out;
  out.blocked_since_ns = sync.since_ns;
  out.target = sync.target == "stream" ? detect::SyncTarget::kStream
               : sync.target == "event" ? detect::SyncTarget::kEvent
                                        : detect::SyncTarget::kDevice;
  out.handle = sync.handle;
  return out;
}

detect::ProcessFacts ToProcessFacts(const dump::RankDump& d) {
  detect::ProcessFacts out;
  out.pid = d.process.pid;
  out.alive = d.process.alive;
  out.host = d.process.host;
  out.global_rank = d.process.global_rank;
  out.exit.recorded = d.process.exit.recorded;
  out.exit.status = d.process.exit.status;
  out.exit.signal = d.process.exit.signal;
  out.exit.exit_ns = d.process.exit.exit_ns;
  for (const dump::HostSync& sync : d.host_syncs) {
    if (sync.since_ns != 0) out.syncs.push_back(ToSyncFacts(sync));
  }
  for (const dump::CommDump& comm : d.comms) out.comms.push_back(ToCommFacts(comm));
  return out;
}

}  // namespace

detect::JobFacts FactsFromDumps(const std::vector<const dump::RankDump*>& dumps) {
  detect::JobFacts facts;
  facts.scope = detect::Scope::kJob;
  facts.processes.reserve(dumps.size());
  for (const dump::RankDump* d : dumps) facts.processes.push_back(ToProcessFacts(*d));
  return facts;
}

uint64_t EffectiveLastCompleted(const dump::CommDump& comm) {
  return detect::EffectiveLastCompleted(comm.last_completed_seq, CollectiveRecords(comm));
}

}  // namespace ncclwatch::analyze
