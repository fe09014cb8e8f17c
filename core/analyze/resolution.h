// Whether the incidents behind a set of dumps are over: a rank whose watchdog saw the
// incident's collective (or init, or host sync) complete after dumping left a resolution
// note next to its dump (core/dump/resolution.h).
//
// An incident (one incident id) is resolved when every dump of it in the set has a valid
// note of its own (same incident id and pid): a rank that was killed before the collective
// completed, or that never saw it complete, keeps the incident open. The set is resolved
// when it holds at least one dump and every incident in it is resolved; then the analysis is
// marked resolved (Analysis::resolution) and `ncclwatch analyze` exits 0. Every dump counts, older incidents of a
// process included: one still open among them is enough to keep the set open.
//
// Dumps without notes (any dump written before notes existed, or of an incident that did
// not resolve) read as unresolved; nothing else changes. Notes are input: bounded, validated,
// and one that is malformed or belongs to another dump is ignored with a note.
#ifndef NCCLWATCH_CORE_ANALYZE_RESOLUTION_H_
#define NCCLWATCH_CORE_ANALYZE_RESOLUTION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/analyze/analysis.h"
#include "core/dump/dump_reader.h"

namespace ncclwatch::analyze {

struct ResolutionSummary {
  size_t incidents = 0;           // distinct incident ids among the dumps
  size_t resolved_incidents = 0;
  bool all_resolved = false;      // incidents > 0 and every one resolved
  // The longest detection-to-resolution time among the notes of resolved incidents (each
  // measured on its own host's monotonic clock).
  uint64_t resolved_after_ns = 0;
  std::vector<std::string> notes;  // partial resolutions, ignored notes (bounded)
};

ResolutionSummary SummarizeResolutions(const dump::DumpSet& set);

// Sets analysis->resolution and appends the summary's notes.
void ApplyResolutions(const dump::DumpSet& set, Analysis* analysis);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_RESOLUTION_H_
