#include "core/detect/comm_group.h"

#include <algorithm>
#include <map>

namespace ncclwatch::detect {
namespace {

// Whether `candidate` should replace `current` as the holder of one rank.
bool Supersedes(const CommMember& candidate, const CommMember& current) {
  if (candidate.alive() != current.alive()) return candidate.alive();
  return candidate.comm->init_started_ns > current.comm->init_started_ns;
}

}  // namespace

std::vector<CommGroup> GroupByComm(const HostView& view) {
  std::map<uint64_t, std::map<int, CommMember>> by_hash;
  for (const ProcessView& process : view.processes) {
    for (const CommView& comm : process.comms) {
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
    for (const auto& [rank, member] : ranks) {
      group.members.push_back(member);
      group.nranks = std::max(group.nranks, member.comm->nranks);
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

const CollectiveRecordView* FindRecord(const CommView& comm, uint64_t seq) {
  for (const CollectiveRecordView& record : comm.records) {
    if (record.seq == seq) return &record;
  }
  return nullptr;
}

std::vector<int> RanksOf(const std::vector<CommMember>& members) {
  std::vector<int> ranks;
  for (const CommMember& member : members) ranks.push_back(member.rank());
  return ranks;
}

}  // namespace ncclwatch::detect
