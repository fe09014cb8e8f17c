// Groups the watchdog's new verdicts into incidents, so that one stall gives one dump per
// rank and one log line, not one per communicator it ripples through.
//
// A rank stuck on one communicator soon stalls every communicator it shares with the
// others: a data-loading straggler on the world communicator leaves its tensor-parallel
// peers waiting too, and their streams stop behind the stalled collective. Those later
// verdicts are consequences, not new incidents.
//
// Rules:
//  - The new verdicts of one poll form one incident. Its primary verdict is the most
//    important kind (detect::Priority), then the communicator with the most ranks, then
//    the earliest onset; the others are related.
//  - A verdict whose onset is not later than the detection time of the previous incident
//    began before that incident was declared: it is related to it and starts nothing new.
//  - A verdict whose onset is later starts a new incident.
#ifndef NCCLWATCH_CORE_WATCH_INCIDENT_GROUPING_H_
#define NCCLWATCH_CORE_WATCH_INCIDENT_GROUPING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/detect/verdict.h"

namespace ncclwatch::watch {

struct IncidentVerdicts {
  detect::Verdict primary;
  std::vector<detect::Verdict> related;
};

struct GroupedVerdicts {
  // At most one: the incident declared by this poll.
  std::vector<IncidentVerdicts> incidents;
  // Consequences of an incident declared by an earlier poll.
  std::vector<detect::Verdict> late_related;
};

class IncidentGrouper {
 public:
  // `new_verdicts` are the verdicts first seen in this poll (detect::IncidentTracker).
  GroupedVerdicts Group(std::vector<detect::Verdict> new_verdicts, uint64_t now_ns);

 private:
  uint64_t last_incident_ns_ = 0;  // detection time of the last incident; 0 before any
};

// "straggler comm 0x... #21 AllReduce" — how a related verdict is named in logs and dumps.
std::string ShortName(const detect::Verdict& v);

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_INCIDENT_GROUPING_H_
