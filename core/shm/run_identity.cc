#include "core/shm/run_identity.h"

#include <unistd.h>

#include <algorithm>
#include <set>
#include <vector>

#include "core/shm/process_info.h"

namespace ncclwatch::shm {
namespace {

// splitmix64's finalizer: every input bit reaches every output bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void AddKnownHashes(const ProcessView& p, std::set<uint64_t>* hashes) {
  for (const CommView& c : p.comms) {
    if (HashKnown(c)) hashes->insert(c.comm_hash);
  }
}

bool SharesAHash(const ProcessView& p, const std::set<uint64_t>& hashes) {
  return std::any_of(p.comms.begin(), p.comms.end(), [&](const CommView& c) {
    return HashKnown(c) && hashes.count(c.comm_hash) != 0;
  });
}

}  // namespace

uint64_t RunKeyOf(const std::string& boot_id, pid_t parent_pid, uint64_t parent_start_ticks) {
  uint64_t h = 0x6e63636c77617463ULL;  // "ncclwatc"
  for (const char c : boot_id) h = Mix(h ^ static_cast<unsigned char>(c));
  h = Mix(h ^ static_cast<uint64_t>(static_cast<uint32_t>(parent_pid)));
  h = Mix(h ^ parent_start_ticks);
  return h == 0 ? 1 : h;
}

uint64_t ThisProcessRunKey() {
  const pid_t parent = getppid();
  return RunKeyOf(BootId(), parent, ProcessStartTicks(parent));
}

void KeepRunOf(pid_t self, JobSnapshot* snapshot) {
  std::vector<ProcessView>& all = snapshot->processes;
  const auto own = std::find_if(all.begin(), all.end(), [&](const ProcessView& p) { return p.pid == self; });
  if (own == all.end()) return;
  std::vector<bool> member(all.size());
  std::set<uint64_t> hashes;
  for (size_t i = 0; i < all.size(); ++i) {
    member[i] = all[i].run_key == own->run_key;
    if (member[i]) AddKnownHashes(all[i], &hashes);
  }
  // Each round joins at least one process or ends: at most all.size() rounds.
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < all.size(); ++i) {
      if (member[i] || !SharesAHash(all[i], hashes)) continue;
      member[i] = grew = true;
      AddKnownHashes(all[i], &hashes);
    }
  }
  std::vector<ProcessView> kept;
  kept.reserve(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    if (member[i]) kept.push_back(std::move(all[i]));
  }
  all = std::move(kept);
}

}  // namespace ncclwatch::shm
