#include "core/watch/incident_line.h"

#include <map>
#include <set>
#include <vector>

#include "core/format/comm_label.h"
#include "core/format/duration.h"
#include "core/format/framework_seq.h"
#include "core/format/hex.h"
#include "core/format/rank_list.h"
#include "core/watch/incident_grouping.h"

namespace ncclwatch::watch {
namespace {

const detect::RankEvidence* EvidenceOf(const detect::Verdict& v, int comm_rank) {
  for (const detect::RankEvidence& e : v.rank_evidence) {
    if (e.comm_rank == comm_rank) return &e;
  }
  return nullptr;
}

// Culprits by global rank, which is what a person searches logs for; the communicator rank
// follows when it differs (split communicators). A process holding several culprit ranks of
// the communicator (ncclCommInitAll, one process driving several GPUs) is named once, as the
// process with its communicator ranks and devices.
std::string CulpritList(const detect::Verdict& v) {
  std::map<int32_t, std::vector<int>> ranks_of_pid;  // culprits by the process holding them
  for (const int comm_rank : v.culprit_ranks) {
    const detect::RankEvidence* e = EvidenceOf(v, comm_rank);
    if (e != nullptr && e->pid != 0 && v.kind != detect::VerdictKind::kSyncStuck) ranks_of_pid[e->pid].push_back(comm_rank);
  }
  std::set<int32_t> named;
  std::string out = "[";
  for (const int comm_rank : v.culprit_ranks) {
    const detect::RankEvidence* e = EvidenceOf(v, comm_rank);
    std::string item;
    if (e != nullptr && ranks_of_pid.count(e->pid) != 0 && ranks_of_pid[e->pid].size() > 1) {
      if (!named.insert(e->pid).second) continue;
      std::vector<int> devices;
      for (const int r : ranks_of_pid[e->pid]) {
        if (const detect::RankEvidence* other = EvidenceOf(v, r); other != nullptr && other->device >= 0) {
          devices.push_back(other->device);
        }
      }
      item = "process " + e->host + ":" + std::to_string(e->pid) +
             (e->global_rank >= 0 ? " (rank " + std::to_string(e->global_rank) + ")" : "") + " driving comm ranks " +
             format::FormatRangeList(ranks_of_pid[e->pid]) +
             (devices.empty() ? "" : ", devices " + format::FormatRangeList(devices));
    } else {
      int global = v.kind == detect::VerdictKind::kSyncStuck ? comm_rank : -1;
      if (e != nullptr && e->global_rank >= 0) global = e->global_rank;
      item = global < 0 ? "comm rank " + std::to_string(comm_rank)
                        : std::to_string(global) +
                              (global == comm_rank ? "" : " (comm rank " + std::to_string(comm_rank) + ")");
    }
    out += (out.size() > 1 ? "," : "") + item;
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
         detect::WaitSubject(v) + who +
         DumpsAndNextStep(dump_dir, written, related);
}

std::string ResolvedLine(const LineOrigin& origin, const ResolvedIncident& incident, uint64_t resolved_after_ns) {
  return LinePrefix(origin, "INFO") + "resolved after " + format::FormatDuration(resolved_after_ns) + ": " +
         incident.kind + " comm " + format::CommLabelUnescaped(incident.comm_hash, incident.comm_name) + " " +
         detect::WaitSubject(incident.seq, incident.op, 0, false, incident.graph_label) + "; noted in " +
         incident.note_path;
}

}  // namespace ncclwatch::watch
