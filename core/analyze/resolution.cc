#include "core/analyze/resolution.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "core/dump/resolution.h"
#include "core/format/duration.h"

namespace ncclwatch::analyze {
namespace {

// A hostile set may hold thousands of incident ids or bad notes: the report names a few.
constexpr size_t kMaxNotes = 4;

struct IncidentTally {
  size_t dumps = 0;
  size_t resolved = 0;
  uint64_t longest_ns = 0;
};

class BoundedNotes {
 public:
  explicit BoundedNotes(std::vector<std::string>* out) : out_(out) {}
  ~BoundedNotes() {
    if (dropped_ > 0) out_->push_back("... and " + std::to_string(dropped_) + " more notes on resolution");
  }
  void Add(std::string note) {
    if (added_++ < kMaxNotes) out_->push_back(std::move(note));
    else ++dropped_;
  }

 private:
  std::vector<std::string>* out_;
  size_t added_ = 0;
  size_t dropped_ = 0;
};

// The note of one dump, if it has a valid one of its own.
bool ReadNoteOf(const dump::LoadedDump& loaded, dump::Resolution* note, std::vector<std::string>* ignored) {
  const std::string path = dump::ResolutionPathForDumpFile(loaded.path);
  Result<std::optional<dump::Resolution>> read = dump::ReadResolutionFile(path);
  if (!read.ok()) {
    ignored->push_back("resolution note ignored: " + read.error().message());
    return false;
  }
  if (!*read) return false;
  *note = std::move(**read);
  if (note->incident_id != loaded.dump.incident.id || note->pid != loaded.dump.process.pid) {
    ignored->push_back("resolution note ignored: " + path + ": it is for incident " + note->incident_id + " of pid " +
                       std::to_string(note->pid) + ", its dump for incident " + loaded.dump.incident.id + " of pid " +
                       std::to_string(loaded.dump.process.pid));
    return false;
  }
  return true;
}

}  // namespace

ResolutionIndex::ResolutionIndex(const dump::DumpSet& set) {
  for (const dump::LoadedDump& loaded : set.dumps) {
    dump::Resolution note;
    if (ReadNoteOf(loaded, &note, &ignored_)) resolved_after_ns_[&loaded] = dump::ResolvedAfterNs(note);
  }
}

std::optional<uint64_t> ResolutionIndex::ResolvedAfter(const dump::LoadedDump& loaded) const {
  auto it = resolved_after_ns_.find(&loaded);
  if (it == resolved_after_ns_.end()) return std::nullopt;
  return it->second;
}

ResolutionSummary SummarizeResolutions(const ResolutionIndex& index, const std::vector<const dump::LoadedDump*>& dumps) {
  ResolutionSummary summary;
  std::map<std::string, IncidentTally> by_incident;
  {
    BoundedNotes notes(&summary.notes);
    for (const std::string& line : index.ignored()) notes.Add(line);
    for (const dump::LoadedDump* loaded : dumps) {
      IncidentTally& tally = by_incident[loaded->dump.incident.id];
      ++tally.dumps;
      const std::optional<uint64_t> after = index.ResolvedAfter(*loaded);
      if (!after) continue;
      ++tally.resolved;
      tally.longest_ns = std::max(tally.longest_ns, *after);
    }
    for (const auto& [id, tally] : by_incident) {
      if (tally.resolved == tally.dumps) {
        ++summary.resolved_incidents;
        summary.resolved_after_ns = std::max(summary.resolved_after_ns, tally.longest_ns);
      } else if (tally.resolved > 0) {
        notes.Add("incident " + id + ": only " + std::to_string(tally.resolved) + " of its " +
                  std::to_string(tally.dumps) + " dumps record that it resolved; the others never saw it complete");
      }
    }
  }
  summary.incidents = by_incident.size();
  summary.all_resolved = summary.incidents > 0 && summary.resolved_incidents == summary.incidents;
  if (!summary.all_resolved) summary.resolved_after_ns = 0;
  if (summary.all_resolved && summary.incidents > 1) {
    summary.notes.push_back("all " + std::to_string(summary.incidents) + " incidents resolved, the last after " +
                            format::FormatDuration(summary.resolved_after_ns));
  }
  return summary;
}

ResolutionSummary SummarizeResolutions(const dump::DumpSet& set) {
  std::vector<const dump::LoadedDump*> all;
  for (const dump::LoadedDump& loaded : set.dumps) all.push_back(&loaded);
  return SummarizeResolutions(ResolutionIndex(set), all);
}

}  // namespace ncclwatch::analyze
