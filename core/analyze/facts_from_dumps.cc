#include "core/analyze/facts_from_dumps.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_set>

#include "core/detect/completion.h"
#include "core/detect/p2p_op.h"
#include "core/detect/pending.h"

namespace ncclwatch::analyze {
namespace {

// P2P completion and matching compare each op with the others of its communicator (stream
// order): a hostile dump's million records must not make that quadratic. The watchdog writes
// 64 P2P records per communicator (watch::kRecordsPerCommInView), so the newest 256 lose nothing real.
constexpr size_t kMaxP2PRecordsPerComm = 256;

// The dump's collectives in ascending #N, the first record of each number only (a hostile
// dump may repeat or reorder them), in place. Written by the watchdog, they already are: then
// nothing is allocated (16384 ranks hold 2 million records).
void NormalizeCollectives(std::vector<detect::RecordFacts>* records) {
  for (detect::RecordFacts& r : *records) r.peer = -1;  // a collective has none, whatever the file says
  const auto ascending = [](const auto& a, const auto& b) { return a.seq < b.seq; };
  if (std::adjacent_find(records->begin(), records->end(), [](const auto& a, const auto& b) { return a.seq >= b.seq; }) ==
      records->end()) {
    return;
  }
  std::unordered_set<uint64_t> seen;
  std::erase_if(*records, [&seen](const detect::RecordFacts& r) { return !seen.insert(r.seq).second; });
  std::stable_sort(records->begin(), records->end(), ascending);
}

// The dump's newest P2P ops, the first record of each (direction, peer, number) only, in place.
void NormalizeP2P(std::vector<detect::RecordFacts>* records) {
  std::set<std::tuple<detect::P2PDirection, int, uint64_t>> seen;
  std::erase_if(*records, [&seen](const detect::RecordFacts& r) {
    return !seen.emplace(detect::P2PDirectionOf(r.op), r.peer, r.seq).second;
  });
  if (records->size() > kMaxP2PRecordsPerComm) {
    records->erase(records->begin(), records->end() - static_cast<std::ptrdiff_t>(kMaxP2PRecordsPerComm));
  }
}

detect::CommFacts ToCommFacts(const detect::CommFacts& dumped) {
  detect::CommFacts out = dumped;
  NormalizeCollectives(&out.records);
  NormalizeP2P(&out.p2p_records);
  out.last_completed_seq = detect::EffectiveLastCompleted(dumped.last_completed_seq, out.records);
  return out;
}

detect::ProcessFacts ToProcessFacts(const dump::RankDump& d) {
  detect::ProcessFacts out;
  out.pid = d.process.pid;
  out.alive = d.process.alive;
  out.host = d.process.host;
  out.global_rank = d.process.global_rank;
  out.local_rank = d.process.local_rank;
  out.world_size = d.process.world_size;
  out.attempt = d.process.attempt;
  out.exit = d.process.exit;
  out.os = d.process.os;
  for (const detect::SyncFacts& sync : d.host_syncs) {
    if (sync.blocked_since_ns == 0) continue;
    out.syncs.push_back(sync);
    out.syncs.back().seen_ns = d.incident.detected_mono_ns;  // still blocked when the dump was taken
  }
  out.comms.reserve(d.comms.size());
  for (const detect::CommFacts& comm : d.comms) out.comms.push_back(ToCommFacts(comm));
  return out;
}

}  // namespace

detect::JobFacts FactsFromDumps(const std::vector<const dump::RankDump*>& dumps, const std::vector<bool>& as_at_abort) {
  detect::JobFacts facts;
  facts.scope = detect::Scope::kJob;
  facts.processes.reserve(dumps.size());
  for (size_t i = 0; i < dumps.size(); ++i) {
    detect::ProcessFacts process = ToProcessFacts(*dumps[i]);
    if (i < as_at_abort.size() && as_at_abort[i]) process = detect::AsAtAbort(std::move(process));
    facts.processes.push_back(std::move(process));
  }
  return facts;
}

}  // namespace ncclwatch::analyze
