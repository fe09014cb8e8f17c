#include "core/watch/incident_resolution.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/detect/replay_state.h"
#include "core/format/hex.h"

namespace ncclwatch::watch {
namespace {

// Parses a decimal field of an incident id; the whole of `text` must be digits.
bool ParseDecimal(const std::string& text, uint64_t* out) {
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  *out = std::strtoull(text.c_str(), nullptr, 10);
  return errno == 0;
}

// "sync_stuck-<pid>-<onset ns>" (core/watch/incident_id.h).
bool ParseSyncStuckId(const std::string& id, IncidentKey* key) {
  constexpr std::string_view kPrefix = "sync_stuck-";
  if (id.rfind(kPrefix, 0) != 0) return false;
  const size_t dash = id.find('-', kPrefix.size());
  if (dash == std::string::npos) return false;
  uint64_t pid = 0, since = 0;
  if (!ParseDecimal(id.substr(kPrefix.size(), dash - kPrefix.size()), &pid) ||
      !ParseDecimal(id.substr(dash + 1), &since) || pid == 0 || pid > INT32_MAX || since == 0) {
    return false;
  }
  key->pid = static_cast<int32_t>(pid);
  key->since_ns = since;
  return true;
}

// This process's ranks of the communicator, else every other process's on this host.
std::vector<const detect::CommFacts*> RanksOf(uint64_t comm_hash, const detect::JobFacts& facts, pid_t self) {
  std::vector<const detect::CommFacts*> mine, others;
  for (const detect::ProcessFacts& p : facts.processes) {
    for (const detect::CommFacts& c : p.comms) {
      if (c.comm_hash != comm_hash) continue;
      (p.pid == self ? mine : others).push_back(&c);
    }
  }
  return mine.empty() ? others : mine;
}

bool CollectiveCompleted(const IncidentKey& key, const detect::JobFacts& facts, pid_t self) {
  const std::vector<const detect::CommFacts*> ranks = RanksOf(key.comm_hash, facts, self);
  if (ranks.empty()) return false;
  for (const detect::CommFacts* c : ranks) {
    // An aborted or revoked communicator's ops end without completing: not a recovery, even
    // where the completed seq moved before the poll saw the abort.
    if (c->aborted() || c->last_completed_seq < key.seq) return false;
  }
  return true;
}

// Replay #seq of the key's graph completed on this process's ranks (replay_state.h).
bool ReplayCompleted(const IncidentKey& key, const detect::JobFacts& facts, pid_t self) {
  const std::vector<const detect::CommFacts*> ranks = RanksOf(key.comm_hash, facts, self);
  if (ranks.empty()) return false;
  for (const detect::CommFacts* c : ranks) {
    if (c->aborted() || detect::ProgressOf(*c, key.graph).completed < key.seq) return false;
  }
  return true;
}

// "<kind>-0x<comm>-0x<graph>-<replay>" (core/watch/incident_id.h): the graph's key. A
// collective's id ("<kind>-0x<comm>-<seq>") has one field fewer.
bool ParseReplayGraph(const std::string& id, IncidentKey* key) {
  std::vector<std::string> fields;
  for (size_t start = 0;;) {
    const size_t dash = id.find('-', start);
    fields.push_back(id.substr(start, dash == std::string::npos ? std::string::npos : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  if (fields.size() != 4) return false;
  const std::string& graph = fields[2];
  if (graph.size() < 3 || graph.size() > 18 || graph.rfind("0x", 0) != 0 ||
      graph.find_first_not_of("0123456789abcdef", 2) != std::string::npos) {
    return false;
  }
  key->graph = std::strtoull(graph.c_str() + 2, nullptr, 16);
  return key->graph != 0;
}

bool InitFinished(const IncidentKey& key, const detect::JobFacts& facts, pid_t self) {
  const std::vector<const detect::CommFacts*> ranks = RanksOf(key.comm_hash, facts, self);
  if (ranks.empty()) return false;
  for (const detect::CommFacts* c : ranks) {
    if (c->lifecycle == detect::CommLifecycle::kInitializing || c->lifecycle == detect::CommLifecycle::kInitFailed ||
        c->init_done_ns == 0) {
      return false;
    }
  }
  return true;
}

bool SyncReturned(const IncidentKey& key, const detect::JobFacts& facts) {
  for (const detect::ProcessFacts& p : facts.processes) {
    if (p.pid != key.pid) continue;
    for (const detect::SyncFacts& s : p.syncs) {
      if (s.blocked_since_ns == key.since_ns) return false;
    }
    return true;
  }
  return false;  // the process is gone: whether its sync returned is unknown
}

}  // namespace

namespace {

// What ends an incident of each kind: the one list of kinds, read by IncidentKeyOf and
// IncidentKeyResolved alike.
enum class EndedBy {
  kCollective,  // collective #seq completed on this process's ranks
  kReplay,      // replay #seq of the key's graph completed on this process's ranks
  kInit,        // the communicator's init finished
  kSyncReturn,  // the host sync of the onset returned
  // Never tracked to an end: a mismatch is a bug of the job even when NCCL finished the calls;
  // P2P numbers count per pair and direction, so the key (comm, seq) cannot name the op.
  kNever,
};

// `in_replay`: the verdict waits in a replay of a CUDA graph (detect::ReplayGraphOf).
EndedBy EndedByOf(detect::VerdictKind kind, bool in_replay) {
  switch (kind) {
    case detect::VerdictKind::kReplayStraggler:
    case detect::VerdictKind::kReplayHang:
      return EndedBy::kReplay;
    case detect::VerdictKind::kRankExited:
      return in_replay ? EndedBy::kReplay : EndedBy::kCollective;
    case detect::VerdictKind::kStraggler:
    case detect::VerdictKind::kCollectiveHang:
      return EndedBy::kCollective;
    case detect::VerdictKind::kInitHang:
      return EndedBy::kInit;
    case detect::VerdictKind::kSyncStuck:
      return EndedBy::kSyncReturn;
    case detect::VerdictKind::kP2PMismatch:
    case detect::VerdictKind::kP2PDeadlock:
    case detect::VerdictKind::kP2PStraggler:
    case detect::VerdictKind::kP2PHang:
    case detect::VerdictKind::kMismatch:
    case detect::VerdictKind::kStaleUniqueId:  // an init from a used id never legitimately finishes
    case detect::VerdictKind::kNone:
    case detect::VerdictKind::kUnknown:
      return EndedBy::kNever;
  }
  return EndedBy::kNever;
}

}  // namespace

std::optional<IncidentKey> IncidentKeyOf(const detect::Verdict& verdict, const std::string& incident_id) {
  IncidentKey key;
  key.kind = verdict.kind;
  key.comm_hash = verdict.comm_hash;
  key.seq = verdict.seq;
  // The id names the graph of a wait in a replay; a collective's id has no fourth field.
  const bool in_replay = ParseReplayGraph(incident_id, &key);
  switch (EndedByOf(key.kind, in_replay)) {
    case EndedBy::kCollective:
      if (key.seq == 0) return std::nullopt;
      return key;
    case EndedBy::kReplay:
      if (key.seq == 0 || !in_replay) return std::nullopt;
      return key;
    case EndedBy::kInit:
      return key;
    case EndedBy::kSyncReturn:
      if (!ParseSyncStuckId(incident_id, &key)) return std::nullopt;
      return key;
    case EndedBy::kNever:
      return std::nullopt;
  }
  return std::nullopt;
}

bool IncidentKeyResolved(const IncidentKey& key, const detect::JobFacts& facts, pid_t self) {
  switch (EndedByOf(key.kind, key.graph != 0)) {
    case EndedBy::kCollective:
      return CollectiveCompleted(key, facts, self);
    case EndedBy::kReplay:
      return ReplayCompleted(key, facts, self);
    case EndedBy::kInit:
      return InitFinished(key, facts, self);
    case EndedBy::kSyncReturn:
      return SyncReturned(key, facts);
    case EndedBy::kNever:
      return false;
  }
  return false;
}

}  // namespace ncclwatch::watch
