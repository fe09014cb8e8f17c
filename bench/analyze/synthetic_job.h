// Synthetic rank dumps of realistic size for the analyzer benchmark: a world communicator
// plus one 8-rank tensor-parallel communicator per host, 64 recent records each, native
// and Python stacks. Rank `straggler` has not joined the last world collective.
#ifndef NCCLWATCH_BENCH_ANALYZE_SYNTHETIC_JOB_H_
#define NCCLWATCH_BENCH_ANALYZE_SYNTHETIC_JOB_H_

#include "core/dump/dump.h"

namespace ncclwatch::bench {

dump::RankDump SyntheticRankDump(int rank, int nranks, int straggler);

}  // namespace ncclwatch::bench

#endif  // NCCLWATCH_BENCH_ANALYZE_SYNTHETIC_JOB_H_
