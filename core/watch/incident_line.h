// The lines the watchdog logs about an incident, as pure functions of the verdict, so that a
// test holds them to the format README.md and preload/README.md document ("Incident line",
// "Resolved line"). They follow NCCL's own prefix, so `grep NCCLWATCH` or a search for the
// rank finds them among NCCL's lines:
//
//   <host>:<pid>:<tid> [rank R] NCCLWATCH WARN <kind> comm 0x<hash> #<seq> <op> culprit ranks [..];
//       dumps in <dir> (related: ...); next: ncclwatch analyze <dir>
//
// (one line). Culprits are global ranks, followed by "(comm rank r)" on a split communicator.
// A host whose ranks all joined blames none of its own: "waiting on comm ranks [..] on other
// hosts" replaces "culprit ranks [..]". When the dump could not be written, "; dump FAILED,
// dir <dir>" replaces "; dumps in <dir>" and there is no next step (nothing to analyze).
#ifndef NCCLWATCH_CORE_WATCH_INCIDENT_LINE_H_
#define NCCLWATCH_CORE_WATCH_INCIDENT_LINE_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/detect/verdict.h"

namespace ncclwatch::watch {

// Who writes the line: NCCL's "<host>:<pid>:<tid> [rank R]" (rank -1 while unknown).
struct LineOrigin {
  std::string host;
  pid_t pid = 0;
  pid_t tid = 0;
  int rank = -1;
};

// "<host>:<pid>:<tid> [rank R] NCCLWATCH <level> ".
std::string LinePrefix(const LineOrigin& origin, std::string_view level);

// "related: <short name>, <short name>" (incident_grouping.h ShortName); "" for none.
std::string RelatedText(const std::vector<detect::Verdict>& related);

// Where the dumps went and what to run next, the tail of every line that announces a dump:
// "; dumps in <dir>[ (<related>)]; next: ncclwatch analyze <dir>", or when nothing was
// written "; dump FAILED, dir <dir>[ (<related>)]".
std::string DumpsAndNextStep(const std::string& dump_dir, bool written, const std::string& related = "");

// The incident line (level WARN) of `verdict`, whose related verdicts are `related`
// (RelatedText).
std::string IncidentLine(const LineOrigin& origin, const detect::Verdict& verdict, const std::string& related,
                         const std::string& dump_dir, bool written);

// The resolved line (shown at WARN, written INFO): "resolved after <duration>: <kind> comm
// 0x<hash> #<seq> <op>; noted in <note path>".
struct ResolvedIncident {
  std::string kind;
  uint64_t comm_hash = 0;
  uint64_t seq = 0;
  std::string op;
  std::string note_path;
  std::string comm_name;  // as the incident line showed it; empty when the framework gave none
  std::string graph_label;  // a replay of a CUDA graph (detect::Verdict::graph_label); else empty
};
std::string ResolvedLine(const LineOrigin& origin, const ResolvedIncident& incident, uint64_t resolved_after_ns);

}  // namespace ncclwatch::watch

#endif  // NCCLWATCH_CORE_WATCH_INCIDENT_LINE_H_
