// The post-mortem analyzer: one merged verdict from every rank's dump, from any number of
// hosts, plus the evidence and remediation hints (analysis.h).
//
// Communicators are aligned by commHash and ranks by collective number; monotonic times
// of different hosts are never compared. Missing ranks are tolerated and listed.
// The verdict is the first of the one classifier (core/detect/detector.h) over the facts of
// every dump (facts_from_dumps.h, Scope::kJob), the same rules and order as live
// (detect::VerdictKind's order, core/detect/README.md); among equals, the communicator with
// the most ranks. The ranks' own dumped verdicts are never adopted:
// a rank that exited is in the set as the dump its peer wrote for it.
//
// The dumps are first told apart by run and attempt (runs.h). Each attempt is judged by the
// dumps of its first incident, and what came after (teardown, processes gone, later
// incidents) is told after it (attempt_snapshot.h, after_events.h); the analysis returned is
// of the most recent run's latest attempt with a verdict, with one line per other attempt
// (Analysis::other_attempts) and the other runs in full (Analysis::other_runs).
#ifndef NCCLWATCH_CORE_ANALYZE_ANALYZER_H_
#define NCCLWATCH_CORE_ANALYZE_ANALYZER_H_

#include <vector>

#include "core/analyze/analysis.h"
#include "core/dump/dump_reader.h"

namespace ncclwatch::analyze {

// One run's analysis and the dumps it judged (pointers into the set analysed).
struct JudgedRun {
  Analysis analysis;
  std::vector<const dump::RankDump*> judged;
};

// Every run of `set`, the most recent first, each without other_runs; for `trace`, which
// draws the dumps a run was judged by.
std::vector<JudgedRun> AnalyzeRuns(const dump::DumpSet& set);

// `set` as returned by dump::ReadDumpDir; its rejected files are listed in the analysis.
// Resolution notes next to the dumps (core/dump/resolution.h) are read here.
Analysis Analyze(const dump::DumpSet& set);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_ANALYZER_H_
