#include "core/watch/incident_grouping.h"

#include <algorithm>
#include <tuple>

#include "core/format/hex.h"

namespace ncclwatch::watch {

GroupedVerdicts IncidentGrouper::Group(std::vector<detect::Verdict> new_verdicts, uint64_t now_ns) {
  GroupedVerdicts out;
  std::vector<detect::Verdict> fresh;
  for (detect::Verdict& v : new_verdicts) {
    if (last_incident_ns_ != 0 && v.since_ns <= last_incident_ns_) {
      out.late_related.push_back(std::move(v));
    } else {
      fresh.push_back(std::move(v));
    }
  }
  if (fresh.empty()) return out;
  std::stable_sort(fresh.begin(), fresh.end(), [](const detect::Verdict& a, const detect::Verdict& b) {
    return std::make_tuple(detect::Priority(a.kind), -a.nranks, a.since_ns) <
           std::make_tuple(detect::Priority(b.kind), -b.nranks, b.since_ns);
  });
  IncidentVerdicts incident;
  incident.primary = std::move(fresh.front());
  incident.related.assign(std::make_move_iterator(fresh.begin() + 1), std::make_move_iterator(fresh.end()));
  out.incidents.push_back(std::move(incident));
  last_incident_ns_ = now_ns;
  return out;
}

std::string ShortName(const detect::Verdict& v) {
  std::string name = detect::ToString(v.kind);
  if (v.comm_hash != 0) name += " comm " + format::FormatHex(v.comm_hash);
  if (v.seq != 0) name += " #" + std::to_string(v.seq);
  if (!v.op.empty()) name += " " + v.op;
  return name;
}

}  // namespace ncclwatch::watch
