// Whether the incidents behind a set of dumps are over: a rank whose watchdog saw the
// incident's collective (or init, or host sync) complete after dumping left a resolution
// note next to its dump (core/dump/resolution.h).
//
// An incident (one incident id) is resolved when every dump of it in the set has a valid
// note of its own (same incident id and pid): a rank that was killed before the collective
// completed, or that never saw it complete, keeps the incident open. The set is resolved
// when it holds at least one dump and every incident in it is resolved. `analyze` asks it of the
// dumps it judges an attempt by (attempt_snapshot.h): resolved, the analysis is marked so
// (Analysis::resolution) and, a hang after all, `ncclwatch analyze` exits 4 instead of 3.
//
// Dumps without notes (any dump written before notes existed, or of an incident that did
// not resolve) read as unresolved; nothing else changes. Notes are input: bounded, validated,
// and one that is malformed or belongs to another dump is ignored with a note.
#ifndef NCCLWATCH_CORE_ANALYZE_RESOLUTION_H_
#define NCCLWATCH_CORE_ANALYZE_RESOLUTION_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/dump/dump_reader.h"

namespace ncclwatch::analyze {

// Every dump's own note, read once (bounded, validated); notes that are malformed or belong to
// another dump are ignored, each with a line in ignored().
class ResolutionIndex {
 public:
  explicit ResolutionIndex(const dump::DumpSet& set);
  // Detection to completion, on the dump's host clock, when the dump has a valid note.
  std::optional<uint64_t> ResolvedAfter(const dump::LoadedDump& loaded) const;
  const std::vector<std::string>& ignored() const { return ignored_; }

 private:
  std::unordered_map<const dump::LoadedDump*, uint64_t> resolved_after_ns_;
  std::vector<std::string> ignored_;
};

struct ResolutionSummary {
  size_t incidents = 0;           // distinct incident ids among the dumps
  size_t resolved_incidents = 0;
  bool all_resolved = false;      // incidents > 0 and every one resolved
  // The longest detection-to-resolution time among the notes of resolved incidents (each
  // measured on its own host's monotonic clock).
  uint64_t resolved_after_ns = 0;
  std::vector<std::string> notes;  // partial resolutions, ignored notes (bounded)
};

// Over `dumps` (pointers into the set `index` was built from).
ResolutionSummary SummarizeResolutions(const ResolutionIndex& index, const std::vector<const dump::LoadedDump*>& dumps);
// Over every dump of `set`.
ResolutionSummary SummarizeResolutions(const dump::DumpSet& set);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_RESOLUTION_H_
