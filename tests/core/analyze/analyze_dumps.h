// Runs the analyzer over crafted dumps held in memory, as `ncclwatch analyze` does over files.
#ifndef NCCLWATCH_TESTS_CORE_ANALYZE_ANALYZE_DUMPS_H_
#define NCCLWATCH_TESTS_CORE_ANALYZE_ANALYZE_DUMPS_H_

#include <string>
#include <vector>

#include "core/analyze/analyzer.h"

namespace ncclwatch::testing {

inline analyze::Analysis AnalyzeDumps(const std::vector<dump::RankDump>& job) {
  dump::DumpSet set;
  for (size_t i = 0; i < job.size(); ++i) set.dumps.push_back(dump::LoadedDump{"d" + std::to_string(i), job[i]});
  return analyze::Analyze(set);
}

}  // namespace ncclwatch::testing

#endif  // NCCLWATCH_TESTS_CORE_ANALYZE_ANALYZE_DUMPS_H_
