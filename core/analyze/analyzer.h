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
#ifndef NCCLWATCH_CORE_ANALYZE_ANALYZER_H_
#define NCCLWATCH_CORE_ANALYZE_ANALYZER_H_

#include <vector>

#include "core/analyze/analysis.h"
#include "core/dump/dump_reader.h"

namespace ncclwatch::analyze {

// `set` as returned by dump::ReadDumpDir; its rejected files are listed in the analysis.
Analysis Analyze(const dump::DumpSet& set);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_ANALYZER_H_
