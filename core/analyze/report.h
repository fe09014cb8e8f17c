// Renderings of an Analysis: the text report for people and the stable JSON schema
// "ncclwatch.analysis" (documented in tools/README.md) for programs.
#ifndef NCCLWATCH_CORE_ANALYZE_REPORT_H_
#define NCCLWATCH_CORE_ANALYZE_REPORT_H_

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/analyze/analysis.h"

namespace ncclwatch::analyze {

inline constexpr char kAnalysisSchemaName[] = "ncclwatch.analysis";
// 2: stacks[].threads[] are py-spy-style views (header, tids, names, python_name, active,
// blocked_in, python_merged) with frames as objects; threads_total and threads_not_shown.
//    names next to NCCL's enum numbers (ranks[].async_error_name, fingerprints' datatype_name
// and redop_name, p2p[].datatype_name) and ages (ranks[].waiting_ns, ranks[].last_progress_ns).
// 3: verdict.ranks is verdict.culprit_ranks, the name the culprits have in the dump, the
//    trigger file and detect::Verdict; `ranks` names every rank's state only (ranks[]).
// 4: the analysis is of one run's attempt (the most recent run, its latest attempt with a
//    verdict, judged by its first incident): dumps_read counts the dumps judged; added
//    outcome, run_outcome, culprit_processes, next_step, then, dumps_after, attempt,
//    other_attempts, run, other_runs, stacks[].processes. verdict.resolved no longer means
//    exit 0 (tools/README.md, "Exit status").
inline constexpr int kAnalysisSchemaVersion = 4;

std::string RenderTextReport(const Analysis& analysis);
nlohmann::json RenderJsonReport(const Analysis& analysis);

}  // namespace ncclwatch::analyze

#endif  // NCCLWATCH_CORE_ANALYZE_REPORT_H_
