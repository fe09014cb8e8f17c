#include "core/dump/records_in_order.h"

namespace ncclwatch::dump {

std::vector<const detect::RecordFacts*> RecordsInIssueOrder(const detect::CommFacts& comm) {
  std::vector<const detect::RecordFacts*> out;
  out.reserve(comm.records.size() + comm.p2p_records.size());
  auto collective = comm.records.begin();
  auto p2p = comm.p2p_records.begin();
  while (collective != comm.records.end() || p2p != comm.p2p_records.end()) {
    const bool take_p2p = collective == comm.records.end() ||
                          (p2p != comm.p2p_records.end() && p2p->enqueue_ns < collective->enqueue_ns);
    out.push_back(take_p2p ? &*p2p++ : &*collective++);
  }
  return out;
}

}  // namespace ncclwatch::dump
