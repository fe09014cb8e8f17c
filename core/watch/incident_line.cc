#include "core/watch/incident_line.h"

#include "core/format/comm_label.h"
#include "core/format/duration.h"
#include "core/format/framework_seq.h"
#include "core/format/hex.h"
#include "core/format/rank_list.h"
#include "core/watch/incident_grouping.h"

namespace ncclwatch::watch {
namespace {

// Culprits by global rank, which is what a person searches logs for; the communicator rank
// follows when it differs (split communicators).
std::string CulpritList(const detect::Verdict& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.culprit_ranks.size(); ++i) {
    const int comm_rank = v.culprit_ranks[i];
    int global = v.kind == detect::VerdictKind::kSyncStuck ? comm_rank : -1;
    for (const detect::RankEvidence& e : v.ranks) {
      if (e.comm_rank == comm_rank && e.global_rank >= 0) global = e.global_rank;
    }
    out += i ? "," : "";
    out += global < 0 ? "comm rank " + std::to_string(comm_rank)
                      : std::to_string(global) + (global == comm_rank ? "" : " (comm rank " + std::to_string(comm_rank) + ")");
  }
  return out + "]";
}

}  // namespace

std::string LinePrefix(const LineOrigin& origin, std::string_view level) {
  return origin.host + ":" + std::to_string(origin.pid) + ":" + std::to_string(origin.tid) + " [rank " +
         std::to_string(origin.rank) + "] NCCLWATCH " + std::string(level) + " ";
}

std::string RelatedText(const std::vector<detect::Verdict>& related) {
  std::string text;
  for (const detect::Verdict& r : related) text += (text.empty() ? "related: " : ", ") + ShortName(r);
  return text;
}

std::string DumpsAndNextStep(const std::string& dump_dir, bool written, const std::string& related) {
  return (written ? "; dumps in " : "; dump FAILED, dir ") + dump_dir + (related.empty() ? "" : " (" + related + ")") +
         (written ? "; next: ncclwatch analyze " + dump_dir : "");
}

std::string IncidentLine(const LineOrigin& origin, const detect::Verdict& v, const std::string& related,
                         const std::string& dump_dir, bool written) {
  // A host whose ranks all joined names the remote ranks it waits for, and blames none here.
  const std::string who = v.culprit_ranks.empty() && !v.culprits_without_facts.empty()
                              ? " waiting on comm ranks [" + format::FormatRangeList(v.culprits_without_facts) +
                                    "] on other hosts"
                              : " culprit ranks " + CulpritList(v);
  return LinePrefix(origin, "WARN") + detect::ToString(v.kind) + " comm " +
         format::CommLabelUnescaped(v.comm_hash, v.comm_name) + " " +
         detect::WaitSubject(v.seq, v.op, v.framework_seq, detect::IsPointToPointKind(v.kind), v.graph_label) + who +
         DumpsAndNextStep(dump_dir, written, related);
}

std::string ResolvedLine(const LineOrigin& origin, const ResolvedIncident& incident, uint64_t resolved_after_ns) {
  return LinePrefix(origin, "INFO") + "resolved after " + format::FormatDuration(resolved_after_ns) + ": " +
         incident.kind + " comm " + format::CommLabelUnescaped(incident.comm_hash, incident.comm_name) + " " +
         detect::WaitSubject(incident.seq, incident.op, 0, false, incident.graph_label) + "; noted in " +
         incident.note_path;
}

}  // namespace ncclwatch::watch
