#include "core/detect/comm_group.h"

#include <algorithm>
#include <map>

#include "core/detect/pending.h"

namespace ncclwatch::detect {
namespace {

// Whether `candidate` should replace `current` as the holder of one rank.
bool Supersedes(const CommMember& candidate, const CommMember& current) {
  if (candidate.alive() != current.alive()) return candidate.alive();
  return candidate.comm->init_started_ns > current.comm->init_started_ns;
}

}  // namespace

bool CommMember::waits() const { return alive() && WaitsOnCollective(*comm); }

std::vector<format::RankRange> CommGroup::NotVisibleRanges() const {
  std::vector<format::RankRange> ranges;
  int next = 0;  // lowest rank not yet accounted for; members are sorted by rank
  for (const CommMember& member : members) {
    if (member.rank() > next) ranges.push_back({next, member.rank() - 1});
    next = member.rank() + 1;
  }
  if (next < nranks) ranges.push_back({next, nranks - 1});
  return ranges;
}

std::vector<CommGroup> GroupByComm(const JobFacts& facts) {
  std::map<uint64_t, std::map<int, CommMember>> by_hash;
  for (const ProcessFacts& process : facts.processes) {
    for (const CommFacts& comm : process.comms) {
      if (!comm.judged() || comm.rank < 0 || comm.rank >= comm.nranks) continue;
      CommMember member{&process, &comm};
      auto& ranks = by_hash[comm.comm_hash];
      auto [it, inserted] = ranks.emplace(comm.rank, member);
      if (!inserted && Supersedes(member, it->second)) it->second = member;
    }
  }
  std::vector<CommGroup> groups;
  for (const auto& [hash, ranks] : by_hash) {
    CommGroup group;
    group.comm_hash = hash;
    group.scope = facts.scope;
    for (const auto& [rank, member] : ranks) {
      group.members.push_back(member);
      group.nranks = std::max(group.nranks, member.comm->nranks);
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

const RecordFacts* FindRecord(const CommFacts& comm, uint64_t seq) {
  for (const RecordFacts& record : comm.records) {
    if (record.seq == seq) return &record;
  }
  return nullptr;
}

}  // namespace ncclwatch::detect
