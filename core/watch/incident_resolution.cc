#include "core/watch/incident_resolution.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/watch/facts_from_snapshot.h"

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
std::vector<const shm::CommView*> RanksOf(uint64_t comm_hash, const shm::JobSnapshot& snapshot, pid_t self) {
  std::vector<const shm::CommView*> mine, others;
  for (const shm::ProcessView& p : snapshot.processes) {
    for (const shm::CommView& c : p.comms) {
      if (c.comm_hash != comm_hash || c.state == shm::CommState::kFree) continue;
      (p.pid == self ? mine : others).push_back(&c);
    }
  }
  return mine.empty() ? others : mine;
}

bool CollectiveCompleted(const IncidentKey& key, const shm::JobSnapshot& snapshot, pid_t self) {
  const std::vector<const shm::CommView*> ranks = RanksOf(key.comm_hash, snapshot, self);
  if (ranks.empty()) return false;
  for (const shm::CommView* c : ranks) {
    // An aborted or revoked communicator's ops end without completing: not a recovery, even
    // where the completed seq moved before the poll saw the abort.
    if (c->state == shm::CommState::kAborted || c->state == shm::CommState::kRevoked) return false;
    if (CommFactsFromSnapshot(*c).last_completed_seq < key.seq) return false;
  }
  return true;
}

bool InitFinished(const IncidentKey& key, const shm::JobSnapshot& snapshot, pid_t self) {
  const std::vector<const shm::CommView*> ranks = RanksOf(key.comm_hash, snapshot, self);
  if (ranks.empty()) return false;
  for (const shm::CommView* c : ranks) {
    if (c->state == shm::CommState::kInitializing || c->state == shm::CommState::kInitFailed ||
        c->init_done_ns == 0) {
      return false;
    }
  }
  return true;
}

bool SyncReturned(const IncidentKey& key, const shm::JobSnapshot& snapshot) {
  for (const shm::ProcessView& p : snapshot.processes) {
    if (p.pid != key.pid) continue;
    for (const shm::SyncView& s : p.sync_slots) {
      if (s.blocked_since_ns == key.since_ns) return false;
    }
    return true;
  }
  return false;  // the process is gone: whether its sync returned is unknown
}

}  // namespace

std::optional<IncidentKey> IncidentKeyOf(const dump::LocalVerdict& verdict, const std::string& incident_id) {
  const std::optional<detect::VerdictKind>& kind = verdict.kind;
  if (!kind) return std::nullopt;
  IncidentKey key;
  key.kind = *kind;
  key.comm_hash = verdict.comm_hash;
  key.seq = verdict.seq;
  switch (*kind) {
    case detect::VerdictKind::kStraggler:
    case detect::VerdictKind::kCollectiveHang:
    case detect::VerdictKind::kRankExited:
      if (key.seq == 0) return std::nullopt;
      return key;
    case detect::VerdictKind::kInitHang:
      return key;
    case detect::VerdictKind::kSyncStuck:
      if (!ParseSyncStuckId(incident_id, &key)) return std::nullopt;
      return key;
    // P2P numbers count per pair and direction: the key (comm, seq) cannot name the op, so a
    // P2P incident is not tracked to its end (like a mismatch).
    case detect::VerdictKind::kP2PMismatch:
    case detect::VerdictKind::kP2PDeadlock:
    case detect::VerdictKind::kP2PStraggler:
    case detect::VerdictKind::kP2PHang:
    case detect::VerdictKind::kMismatch:
    case detect::VerdictKind::kNone:
      return std::nullopt;
  }
  return std::nullopt;
}

bool IncidentKeyResolved(const IncidentKey& key, const shm::JobSnapshot& snapshot, pid_t self) {
  switch (key.kind) {
    case detect::VerdictKind::kStraggler:
    case detect::VerdictKind::kCollectiveHang:
    case detect::VerdictKind::kRankExited:
      return CollectiveCompleted(key, snapshot, self);
    case detect::VerdictKind::kInitHang:
      return InitFinished(key, snapshot, self);
    case detect::VerdictKind::kSyncStuck:
      return SyncReturned(key, snapshot);
    case detect::VerdictKind::kP2PMismatch:
    case detect::VerdictKind::kP2PDeadlock:
    case detect::VerdictKind::kP2PStraggler:
    case detect::VerdictKind::kP2PHang:
    case detect::VerdictKind::kMismatch:
    case detect::VerdictKind::kNone:
      return false;
  }
  return false;
}

}  // namespace ncclwatch::watch
